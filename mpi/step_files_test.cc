// Unit tests for the step's files in its attempt directory.
#include "mpi/step_files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace scimesh::mpi {
namespace {

namespace fs = std::filesystem;

class StepFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/scimesh-step-files-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Read(const std::string& rel) {
    std::ifstream in(dir_ + "/" + rel);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::string dir_;
};

TEST_F(StepFilesTest, ReadsInputAndPreviousFromTheLease) {
  std::ofstream(dir_ + "/lease.json")
      << R"({"lease_id":"l_1","attempt":2,"input":{"n":16},"previous":{"a":{"x":1}},"coordinator_url":"http://127.0.0.1:1"})";
  auto lease = StepFiles(dir_).ReadLease();
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  EXPECT_EQ(lease->lease_id, "l_1");
  EXPECT_EQ(lease->attempt, 2);
  EXPECT_EQ(lease->input_json, R"({"n":16})");
  EXPECT_EQ(lease->previous_json, R"({"a":{"x":1}})");
}

TEST_F(StepFilesTest, MissingOrBrokenLeaseIsAClearError) {
  EXPECT_EQ(StepFiles(dir_).ReadLease().status().code(), Code::kNotFound);
  std::ofstream(dir_ + "/lease.json") << R"({"attempt":1})";
  EXPECT_EQ(StepFiles(dir_).ReadLease().status().code(), Code::kInvalidArgument);
}

TEST_F(StepFilesTest, OutputMustBeAJsonObject) {
  StepFiles files(dir_);
  EXPECT_EQ(files.WriteOutput("[1,2]").code(), Code::kInvalidArgument);
  EXPECT_EQ(files.WriteOutput("{broken").code(), Code::kInvalidArgument);
  EXPECT_FALSE(fs::exists(dir_ + "/output.json"));
  ASSERT_TRUE(files.WriteOutput(R"({"iterations":41})").ok());
  EXPECT_EQ(Read("output.json"), R"({"iterations":41})");
  // Nothing temporary is left behind.
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++entries;
  EXPECT_EQ(entries, 1);
}

TEST_F(StepFilesTest, ArtifactNamesCannotEscape) {
  for (const char* bad : {"", "../x", "a/b", ".hidden", "/etc/passwd", "a b", "..", "x\n"}) {
    EXPECT_FALSE(IsSafeArtifactName(bad)) << bad;
  }
  EXPECT_TRUE(IsSafeArtifactName("solution-32.vti"));
  std::ofstream(dir_ + "/src.txt") << "hello";
  EXPECT_EQ(StepFiles(dir_).AddArtifact("../up.txt", dir_ + "/src.txt", "").code(), Code::kInvalidArgument);
  EXPECT_FALSE(fs::exists(fs::path(dir_).parent_path() / "up.txt"));
}

TEST_F(StepFilesTest, ArtifactIsCopiedWithItsMediaType) {
  std::ofstream(dir_ + "/src.txt") << "hello";
  ASSERT_TRUE(StepFiles(dir_).AddArtifact("table.txt", dir_ + "/src.txt", "text/plain").ok());
  EXPECT_EQ(Read("artifacts/table.txt"), "hello");
  EXPECT_EQ(Read("artifacts/.table.txt.media-type"), "text/plain");
  EXPECT_EQ(StepFiles(dir_).AddArtifact("x", dir_ + "/missing", "").code(), Code::kNotFound);
}

TEST_F(StepFilesTest, AtomicWriteDoesNotFollowAPlantedSymlink) {
  fs::create_directory(dir_ + "/artifacts");
  std::ofstream(dir_ + "/victim") << "keep";
  std::ofstream(dir_ + "/src.txt") << "new";
  // The temporary name is predictable, so plant a symlink there too.
  fs::create_symlink(dir_ + "/victim", dir_ + "/artifacts/a.txt.tmp." + std::to_string(getpid()));
  Status s = StepFiles(dir_).AddArtifact("a.txt", dir_ + "/src.txt", "");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(Read("victim"), "keep");
}

}  // namespace
}  // namespace scimesh::mpi

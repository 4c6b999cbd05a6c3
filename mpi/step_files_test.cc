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
  std::ofstream(dir_ + "/src.txt") << "hello";
  for (const char* bad : {"", "../up.txt", "a/b", ".hidden", "/etc/passwd", "a b", "..", "x\n"}) {
    EXPECT_EQ(StepFiles(dir_).AddArtifact(bad, dir_ + "/src.txt", "").code(), Code::kInvalidArgument) << bad;
  }
  EXPECT_FALSE(fs::exists(fs::path(dir_).parent_path() / "up.txt"));
  EXPECT_FALSE(fs::exists(fs::path(dir_) / "artifacts" / ".hidden"));
  EXPECT_TRUE(StepFiles(dir_).AddArtifact("solution-32.vti", dir_ + "/src.txt", "").ok());
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
  // The temporary names are predictable (.<name>.tmp.<pid>.<n>), so plant
  // symlinks at all the first ones, and one at the name itself.
  for (int n = 0; n < 256; ++n) {
    fs::create_symlink(dir_ + "/victim", dir_ + "/artifacts/.a.txt.tmp." + std::to_string(getpid()) + "." +
                                             std::to_string(n));
  }
  Status s = StepFiles(dir_).AddArtifact("a.txt", dir_ + "/src.txt", "");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(Read("victim"), "keep");
  fs::create_symlink(dir_ + "/victim", dir_ + "/artifacts/b.txt");
  for (int n = 0; n < 256; ++n) fs::remove(dir_ + "/artifacts/.a.txt.tmp." + std::to_string(getpid()) + "." + std::to_string(n));
  ASSERT_TRUE(StepFiles(dir_).AddArtifact("b.txt", dir_ + "/src.txt", "").ok());
  EXPECT_EQ(Read("victim"), "keep") << "the rename replaces the link; it never writes through it";
  EXPECT_FALSE(fs::is_symlink(dir_ + "/artifacts/b.txt"));
}

TEST_F(StepFilesTest, FirstFailureWins) {
  StepFiles files(dir_);
  auto first = files.WriteFailure({FailClass::kFatal, "bad mesh: 0 cells", 3, "n2"});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(*first);
  EXPECT_EQ(Read("failure.json"), R"({"class":"fatal","message":"bad mesh: 0 cells","rank":3,"host":"n2"})" "\n");
  struct stat st {};
  ASSERT_EQ(::stat((dir_ + "/failure.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  auto second = files.WriteFailure({FailClass::kRetryable, "later", 1, "n1"});
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_FALSE(*second);
  EXPECT_NE(Read("failure.json").find("bad mesh"), std::string::npos);
  // Nothing temporary is left behind.
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++entries;
  EXPECT_EQ(entries, 1);
}

TEST_F(StepFilesTest, FailureMessageIsOneSanitisedLine) {
  ASSERT_TRUE(StepFiles(dir_).WriteFailure({FailClass::kFatal, "no mesh at /home/u/case/mesh.vtu\n  at main()", 0,
                                            "n1"}).ok());
  EXPECT_EQ(Read("failure.json"), R"({"class":"fatal","message":"no mesh at mesh.vtu","rank":0,"host":"n1"})" "\n");
}

TEST_F(StepFilesTest, FailureDoesNotFollowAPlantedSymlink) {
  std::ofstream(dir_ + "/victim") << "keep";
  fs::create_symlink(dir_ + "/victim", dir_ + "/failure.json");
  auto wrote = StepFiles(dir_).WriteFailure({FailClass::kFatal, "x", 0, "n1"});
  EXPECT_EQ(wrote.status().code(), Code::kPermissionDenied);
  EXPECT_EQ(Read("victim"), "keep");
  EXPECT_TRUE(fs::is_symlink(dir_ + "/failure.json"));
  // A dangling one is not followed either (link() would not create its target).
  fs::remove(dir_ + "/failure.json");
  fs::create_symlink(dir_ + "/made", dir_ + "/failure.json");
  EXPECT_FALSE(StepFiles(dir_).WriteFailure({FailClass::kFatal, "x", 0, "n1"}).ok());
  EXPECT_FALSE(fs::exists(dir_ + "/made"));
}

}  // namespace
}  // namespace scimesh::mpi

// The attempt directory: nothing from the wire or a planted symlink leads outside it.
#include "protocol/attempt/attempt_dir.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "protocol/attempt/step_output.h"
#include "tests/support/test_dir.h"

namespace scimesh {
namespace {

Lease SampleLease() {
  Lease l;
  l.lease_id = "l_0c8e51d2a4b94f17";
  l.run_id = "r_6f1c2a9e0b7d4c35";
  l.step_id = "report";
  l.attempt = 2;
  l.input_json = "{}";
  l.previous_json = "{}";
  l.run_state_json = "{}";
  l.correlation_json = "null";
  return l;
}

TEST(AttemptDir, AGroupWritableRunDirectoryIsRefusedByName) {
  TestDir spool;
  // Another member of the group could replace the step directory under it.
  ASSERT_EQ(::mkdir((spool / "r_6f1c2a9e0b7d4c35").c_str(), 0700), 0);
  ASSERT_EQ(::chmod((spool / "r_6f1c2a9e0b7d4c35").c_str(), 0770), 0);
  auto dir = AttemptDir::Open(spool.path(), SampleLease());
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.status().code(), Code::kPermissionDenied);
  EXPECT_NE(dir.status().message().find("run directory r_6f1c2a9e0b7d4c35"), std::string::npos);
}

TEST(AttemptDir, ASpoolOrStepDirectoryOfAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to chown";
  TestDir spool;
  ASSERT_EQ(::mkdir((spool / "r_6f1c2a9e0b7d4c35").c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((spool / "r_6f1c2a9e0b7d4c35/report").c_str(), 0700), 0);
  ASSERT_EQ(::chown((spool / "r_6f1c2a9e0b7d4c35/report").c_str(), 65534, 65534), 0);
  auto dir = AttemptDir::Open(spool.path(), SampleLease());
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().message().find("step directory r_6f1c2a9e0b7d4c35/report"), std::string::npos);
  ASSERT_EQ(::chown(spool.path().c_str(), 65534, 65534), 0);
  auto spool_refused = AttemptDir::Open(spool.path(), SampleLease());
  ASSERT_FALSE(spool_refused.ok());
  EXPECT_NE(spool_refused.status().message().find("spool directory"), std::string::npos);
}

TEST(AttemptDir, CreatesTheDocumentedLayout) {
  TestDir spool;
  auto dir = AttemptDir::Open(spool.path(), SampleLease());
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  EXPECT_EQ(dir->path(), spool / "r_6f1c2a9e0b7d4c35/report/2");
  EXPECT_TRUE(std::filesystem::is_directory(dir->path() + "/inputs"));
  EXPECT_TRUE(std::filesystem::is_directory(dir->path() + "/artifacts"));
  ASSERT_TRUE(dir->WriteLeaseJson(SampleLease(), "http://127.0.0.1:8470").ok());
  struct stat st {};
  ASSERT_EQ(::stat((dir->path() + "/lease.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_NE(TestDir::Read(dir->path() + "/lease.json").find(R"("coordinator_url":"http://127.0.0.1:8470")"),
            std::string::npos);
  // Reopening an existing attempt directory works.
  EXPECT_TRUE(AttemptDir::Open(spool.path(), SampleLease()).ok());
}

TEST(AttemptDir, RefusesIdsThatAreNotOnePathComponent) {
  TestDir spool;
  for (const char* step : {"..", ".", "../../etc", "a/b", ""}) {
    Lease l = SampleLease();
    l.step_id = step;
    EXPECT_FALSE(AttemptDir::Open(spool.path(), l).ok()) << step;
  }
  Lease l = SampleLease();
  l.run_id = "r_/../../tmp";
  EXPECT_FALSE(AttemptDir::Open(spool.path(), l).ok());
  EXPECT_TRUE(std::filesystem::is_empty(spool.path()));
}

TEST(AttemptDir, RefusesASymlinkPlantedOnTheWay) {
  TestDir spool, elsewhere;
  std::filesystem::create_directory_symlink(elsewhere.path(), spool / "r_6f1c2a9e0b7d4c35");
  auto dir = AttemptDir::Open(spool.path(), SampleLease());
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.status().code(), Code::kPermissionDenied);
  EXPECT_TRUE(std::filesystem::is_empty(elsewhere.path()));
}

TEST(AttemptDir, InputsAreWrittenBesideTheirFinalNameAndMovedInOnlyWhenCommitted) {
  TestDir spool;
  auto dir = AttemptDir::Open(spool.path(), SampleLease());
  ASSERT_TRUE(dir.ok());
  auto fd = dir->CreateInputTemp("solve-16", "solution.vti");
  ASSERT_TRUE(fd.ok()) << fd.status().ToString();
  ASSERT_EQ(::write(fd->get(), "abc", 3), 3);
  const std::string final_path = dir->InputPath("solve-16", "solution.vti");
  EXPECT_FALSE(std::filesystem::exists(final_path));
  ASSERT_TRUE(dir->CommitInput("solve-16", "solution.vti").ok());
  EXPECT_EQ(TestDir::Read(final_path), "abc");
  for (const char* bad : {"../x", "/etc/passwd", ".hidden", "a/b", ".."}) {
    EXPECT_FALSE(dir->CreateInputTemp("solve-16", bad).ok()) << bad;
  }
  for (const char* bad : {"../x", "/etc/passwd", "a/b", "..", "."}) {
    EXPECT_FALSE(dir->CreateInputTemp(bad, "ok.txt").ok()) << bad;
  }
}

TEST(AttemptDir, ArtifactsMustBeRegularFilesInsideArtifacts) {
  TestDir spool, elsewhere;
  auto dir = AttemptDir::Open(spool.path(), SampleLease());
  ASSERT_TRUE(dir.ok());
  TestDir::Write(elsewhere / "secret", "ssh key");
  std::filesystem::create_symlink(elsewhere / "secret", dir->artifacts_path() + "/leak.txt");
  auto leak = dir->OpenArtifact("leak.txt");
  ASSERT_FALSE(leak.ok());
  EXPECT_EQ(leak.status().code(), Code::kPermissionDenied);
  EXPECT_FALSE(dir->CreateArtifact("leak.txt").ok());  // nor written through
  EXPECT_EQ(TestDir::Read(elsewhere / "secret"), "ssh key");
  ASSERT_EQ(::mkfifo((dir->artifacts_path() + "/pipe").c_str(), 0600), 0);
  EXPECT_FALSE(dir->OpenArtifact("pipe").ok());  // and without hanging
  EXPECT_FALSE(dir->OpenArtifact("../lease.json").ok());
  EXPECT_EQ(dir->OpenArtifact("missing.txt").status().code(), Code::kNotFound);
  auto w = dir->CreateArtifact("ok.txt");
  ASSERT_TRUE(w.ok());
  EXPECT_TRUE(dir->OpenArtifact("ok.txt").ok());
}

TEST(StepOutput, EmptyResultsAreRefused) {
  EXPECT_EQ(*CheckStepOutput(R"({ "a" : 1 })"), R"({"a":1})");
  EXPECT_EQ(*CheckStepOutput("{}"), "{}");
  for (const char* bad : {"", "   \n", "[]", "42", "null", "\"text\"", "{\"a\":"}) {
    auto r = CheckStepOutput(bad);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  }
  EXPECT_FALSE(CheckStepOutput("{\"pad\":\"" + std::string(kMaxOutputBytes, 'x') + "\"}").ok());
}

TEST(StepOutput, ReadsOutputJsonOfTheAttemptDirectory) {
  TestDir spool;
  auto dir = AttemptDir::Open(spool.path(), SampleLease());
  ASSERT_TRUE(dir.ok());
  auto none = ReadOutputFile(*dir);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no output.json"), std::string::npos);
  TestDir::Write(dir->path() + "/output.json", "");
  EXPECT_FALSE(ReadOutputFile(*dir).ok());
  TestDir::Write(dir->path() + "/output.json", R"({"iterations": 41})");
  EXPECT_EQ(*ReadOutputFile(*dir), R"({"iterations":41})");
}

}  // namespace
}  // namespace scimesh

// What a step left for the report, read as untrusted input: symlinks, FIFOs,
// huge and deeply nested files are refused with an error naming the file.
#include "launcher/step/step_results.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "launcher/step/directory_archive.h"
#include "protocol/attempt/attempt_files.h"
#include "tests/support/test_dir.h"

namespace scimesh::launcher {
namespace {

class StepResultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::mkdir((dir_ / "artifacts").c_str(), 0700), 0);
    fd_ = UniqueFd(::open(dir_.path().c_str(), O_RDONLY | O_DIRECTORY));
  }
  Result<StepResults> Read() { return ReadStepResults(fd_.get(), ::geteuid()); }
  // The error names `file` and says it was refused.
  void ExpectRefused(const char* file) {
    auto r = Read();
    ASSERT_FALSE(r.ok()) << file;
    EXPECT_NE(r.status().message().find(file), std::string::npos) << r.status().message();
  }
  TestDir dir_;
  UniqueFd fd_;
};

TEST_F(StepResultsTest, ReadsWhatTheStepWrote) {
  TestDir::Write(dir_ / "output.json", R"({"x":1})");
  TestDir::Write(dir_ / "usage.json", R"({"flops":2.5,"note":"ignored"})");
  TestDir::Write(dir_ / "artifacts/mesh.vtu", "bytes");
  TestDir::Write(dir_ / "artifacts/.mesh.vtu.media-type", "model/vtu");
  auto r = Read();
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->output, R"({"x":1})");
  EXPECT_FALSE(r->state_patch.has_value());
  EXPECT_EQ(r->usage.at("flops"), 2.5);
  EXPECT_EQ(r->usage.count("note"), 0u);
  ASSERT_EQ(r->artifacts.size(), 1u);
  EXPECT_EQ(r->artifacts[0], (std::pair<std::string, std::string>{"mesh.vtu", "model/vtu"}));
}

TEST_F(StepResultsTest, ADirectoryIsADirectoryArtifactAndALinkIsNot) {
  ASSERT_EQ(::mkdir((dir_ / "artifacts/case").c_str(), 0700), 0);
  ASSERT_EQ(::mkdir((dir_ / "artifacts/.hidden").c_str(), 0700), 0);
  ASSERT_EQ(::symlink(dir_.path().c_str(), (dir_ / "artifacts/up").c_str()), 0);
  auto r = Read();
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->artifacts.size(), 1u);
  EXPECT_EQ(r->artifacts[0], (std::pair<std::string, std::string>{"case", kDirectoryArtifactMediaType}));
}

TEST_F(StepResultsTest, SymlinkedOutputOrUsageIsRefused) {
  TestDir::Write(dir_ / "secret", R"({"stolen":true})");
  ASSERT_EQ(::symlink((dir_ / "secret").c_str(), (dir_ / "output.json").c_str()), 0);
  ExpectRefused("output.json");
  ::unlink((dir_ / "output.json").c_str());
  ASSERT_EQ(::symlink((dir_ / "secret").c_str(), (dir_ / "usage.json").c_str()), 0);
  ExpectRefused("usage.json");
}

TEST_F(StepResultsTest, AFifoAsOutputIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo((dir_ / "output.json").c_str(), 0600), 0);
  ExpectRefused("output.json");
}

// failure.json: the failure a rank reported with scimesh_step_fail.
class StepFailureTest : public StepResultsTest {
 protected:
  Result<std::optional<FailureFile>> ReadFailure() { return ReadStepFailure(fd_.get(), ::geteuid()); }
  // Refused, the message naming failure.json and containing `why`.
  void ExpectRefused(const std::string& text, const std::string& why) {
    TestDir::Write(dir_ / "failure.json", text);
    auto r = ReadFailure();
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.status().message().find("failure.json"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find(why), std::string::npos) << r.status().message();
  }
};

TEST_F(StepFailureTest, NoFileIsNoFailure) {
  auto r = ReadFailure();
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->has_value());
}

TEST_F(StepFailureTest, ReadsTheFailureARankWrote) {
  TestDir::Write(dir_ / "failure.json", R"({"class":"fatal","message":"bad mesh: 0 cells","rank":3,"host":"n2"})");
  auto r = ReadFailure();
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ((*r)->failure_class, FailClass::kFatal);
  EXPECT_EQ((*r)->message, "bad mesh: 0 cells");
  EXPECT_EQ((*r)->rank, 3);
  EXPECT_EQ((*r)->host, "n2");
}

TEST_F(StepFailureTest, MalformedFilesAreRefusedWithTheReason) {
  ExpectRefused("{\"class\":\"fatal\",", "malformed");
  ExpectRefused("[1]", "must be an object");
  ExpectRefused(R"({"message":"m","rank":0,"host":"n1"})", "class");
  ExpectRefused(R"({"class":"fatal","rank":0,"host":"n1"})", "message");
  ExpectRefused(R"({"class":"fatal","message":"m","rank":-1,"host":"n1"})", "rank");
  ExpectRefused(R"({"class":"fatal","message":"m","rank":0,"host":""})", "host");
}

TEST_F(StepFailureTest, UnknownClassIsRefused) {
  ExpectRefused(R"({"class":"Fatal","message":"m","rank":0,"host":"n1"})", "unknown failure class 'Fatal'");
}

TEST_F(StepFailureTest, ClassesOnlyTheLauncherMayReportAreRefused) {
  for (const char* cls : {"unservable", "preempted", "cancelled", "node_failure", "storage_full"}) {
    ExpectRefused(std::string(R"({"class":")") + cls + R"(","message":"m","rank":0,"host":"n1"})",
                  std::string("'") + cls + "' is not a class a step may report");
  }
}

TEST_F(StepFailureTest, OverTheCapOrASymlinkIsRefused) {
  const std::string big(kMaxFailureFileBytes, 'x');
  ExpectRefused(R"({"class":"fatal","message":")" + big + R"(","rank":0,"host":"n1"})", "larger than 65536 bytes");
  ::unlink((dir_ / "failure.json").c_str());
  TestDir::Write(dir_ / "other", R"({"class":"fatal","message":"m","rank":0,"host":"n1"})");
  ASSERT_EQ(::symlink((dir_ / "other").c_str(), (dir_ / "failure.json").c_str()), 0);
  auto r = ReadFailure();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kPermissionDenied) << r.status().message();
}

TEST_F(StepResultsTest, TwoMillionDeepUsageIsRefusedNotACrash) {
  std::string deep(2'000'000, '[');
  deep += std::string(2'000'000, ']');
  TestDir::Write(dir_ / "usage.json", deep);
  ExpectRefused("usage.json");
}

TEST_F(StepResultsTest, AHundredMegabyteOutputIsRefused) {
  UniqueFd f(::open((dir_ / "output.json").c_str(), O_WRONLY | O_CREAT, 0600));
  ASSERT_EQ(::ftruncate(f.get(), off_t{100} << 20), 0);
  ExpectRefused("output.json");
}

TEST_F(StepResultsTest, AFileOfAnotherUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to chown";
  TestDir::Write(dir_ / "output.json", "{}");
  ASSERT_EQ(::chown((dir_ / "output.json").c_str(), 65534, 65534), 0);
  ExpectRefused("output.json");
}

TEST(SrunFoundAllocationEnding, KnowsSrunsRefusalsOfAnEndingJob) {
  // What srun printed in the chaos campaign after a time limit and a scancel.
  EXPECT_TRUE(SrunFoundAllocationEnding(
      "srun: error: Unable to create step for job 41: Job/step already completing or completed\n"));
  EXPECT_TRUE(SrunFoundAllocationEnding("srun: error: Slurm job 43 has expired\n"));
  EXPECT_TRUE(SrunFoundAllocationEnding("srun: error: Unable to create step for job 7: Invalid job id specified\n"));
  // Every release, for a job slurmctld has forgotten (22.05 and 25.11 seen).
  EXPECT_TRUE(SrunFoundAllocationEnding(
      "srun: error: Unable to confirm allocation for job 99999: Invalid job id specified\n"
      "srun: Check SLURM_JOB_ID environment variable. Expired or invalid job 99999\n"));
  // A step that failed on its own is the step's failure.
  EXPECT_FALSE(SrunFoundAllocationEnding("srun: error: n1: task 0: Exited with exit code 1\n"));
  EXPECT_FALSE(SrunFoundAllocationEnding("srun: error: Unable to create step for job 9: Requested node configuration is not available\n"));
  EXPECT_FALSE(SrunFoundAllocationEnding(""));
}

}  // namespace
}  // namespace scimesh::launcher

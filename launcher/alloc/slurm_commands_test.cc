// Unit tests for CommandSlurmJobs: the real sbatch/squeue/scancel runs
// against fake commands written into a directory put first in PATH.
#include <sys/stat.h>

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "launcher/alloc/slurm_jobs.h"
#include "tests/support/test_dir.h"

namespace scimesh::alloc {
namespace {

class CommandSlurmJobsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* path = std::getenv("PATH");
    old_path_ = path ? path : "";
    ASSERT_EQ(setenv("PATH", (dir_.path() + ":" + old_path_).c_str(), 1), 0);
  }
  void TearDown() override { setenv("PATH", old_path_.c_str(), 1); }

  // A fake `name` that records its arguments, one a line, in name.args and
  // then runs `body` (sh).
  void Fake(const std::string& name, const std::string& body) {
    const std::string path = dir_ / name;
    TestDir::Write(path, "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > '" + dir_.path() + "/" + name +
                             ".args'\n" + body + "\n");
    ASSERT_EQ(chmod(path.c_str(), 0700), 0);
  }
  std::string Args(const std::string& name) { return TestDir::Read(dir_ / (name + ".args")); }

  static JobRequest Request() {
    JobRequest r;
    r.tag = "scimesh-alloc-t";
    r.shape = Shape{1, 600, 0, 0};
    r.account = "proj1";
    r.script = "/tmp/job.sh";
    return r;
  }

  TestDir dir_;
  std::string old_path_;
  std::unique_ptr<SlurmJobs> jobs_ = CommandSlurmJobs();
};

TEST_F(CommandSlurmJobsTest, SubmitReturnsTheJobId) {
  Fake("sbatch", "echo 'sbatch: warning: something minor' >&2; echo '4242;cluster1'");
  auto id = jobs_->Submit(Request());
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(*id, "4242");
  EXPECT_EQ(Args("sbatch"),
            "--parsable\n--job-name=scimesh-alloc-t\n--nodes=1\n--time=00:10:00\n--signal=B:USR1@180\n"
            "--account=proj1\n/tmp/job.sh\n");
}

TEST_F(CommandSlurmJobsTest, ARefusalCarriesSlurmsOwnWords) {
  Fake("sbatch",
       "echo 'sbatch: error: invalid account: proj1' >&2\n"
       "echo 'sbatch: error: Batch job submission failed: Invalid account or account/partition combination "
       "specified' >&2\nexit 1");
  auto id = jobs_->Submit(Request());
  EXPECT_EQ(id.status().code(), Code::kUnavailable);
  EXPECT_EQ(id.status().message(),
            "sbatch exited 1: sbatch: error: invalid account: proj1; sbatch: error: Batch job submission failed: "
            "Invalid account or account/partition combination specified");
  const Status test = jobs_->Test(Request());
  EXPECT_EQ(test.code(), Code::kUnavailable);
  EXPECT_NE(test.message().find("Batch job submission failed: Invalid account"), std::string::npos) << test.message();
}

// Many error lines: the decisive last one stays whole, the message bounded.
TEST_F(CommandSlurmJobsTest, ALongRefusalKeepsItsLastLineWhole) {
  Fake("sbatch",
       "i=0; while [ $i -lt 50 ]; do echo \"sbatch: error: detail number $i about the request\" >&2; i=$((i+1)); done\n"
       "echo 'sbatch: error: Batch job submission failed: Requested node configuration is not available' >&2\n"
       "exit 1");
  auto id = jobs_->Submit(Request());
  EXPECT_EQ(id.status().code(), Code::kUnavailable);
  const std::string message = id.status().message();
  EXPECT_LE(message.size(), 700u);
  EXPECT_NE(message.find("Batch job submission failed: Requested node configuration is not available"),
            std::string::npos)
      << message;
}

TEST_F(CommandSlurmJobsTest, ARefusalWithoutErrorLinesCarriesWhatItSaid) {
  Fake("sbatch", "echo 'Slurm is down' >&2; exit 2");
  EXPECT_EQ(jobs_->Submit(Request()).status().message(), "sbatch exited 2: Slurm is down");
}

TEST_F(CommandSlurmJobsTest, SubmitRefusesAnUnparsableAnswer) {
  Fake("sbatch", "echo 'Submitted batch job 12'");
  EXPECT_EQ(jobs_->Submit(Request()).status().code(), Code::kInvalidArgument);
}

TEST_F(CommandSlurmJobsTest, AHostileRequestRunsNothing) {
  Fake("sbatch", "echo 1");
  JobRequest r = Request();
  r.account = "--wrap=touch /tmp/owned";
  EXPECT_EQ(jobs_->Submit(r).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(jobs_->Test(r).code(), Code::kInvalidArgument);
  EXPECT_EQ(Args("sbatch"), "") << "sbatch ran";
}

TEST_F(CommandSlurmJobsTest, TestAsksSbatchTestOnly) {
  Fake("sbatch", "echo 'sbatch: Job 123 to start at 2030-01-01T00:00:00 using 8 processors on nodes n1 in partition p' >&2");
  const Status status = jobs_->Test(Request());
  EXPECT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(Args("sbatch").substr(0, 12), "--test-only\n");
}

TEST_F(CommandSlurmJobsTest, ListReadsSqueue) {
  Fake("squeue", "echo '12|RUNNING|2|1:00:00|5:00'; echo '13|PENDING|2|1:00:00|0:00'");
  auto jobs = jobs_->List("scimesh-alloc-t");
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0], (OurJob{"12", false, 2, 3600, 300}));
  EXPECT_EQ((*jobs)[1], (OurJob{"13", true, 2, 3600, 0}));
  EXPECT_EQ(Args("squeue"), "-h\n--me\n--name=scimesh-alloc-t\n-o\n%i|%T|%D|%l|%M\n");
}

TEST_F(CommandSlurmJobsTest, ListFailsWithSqueuesWords) {
  Fake("squeue", "echo 'squeue: error: Unable to contact slurm controller (connect failure)' >&2; exit 1");
  auto jobs = jobs_->List("scimesh-alloc-t");
  EXPECT_EQ(jobs.status().code(), Code::kUnavailable);
  EXPECT_NE(jobs.status().message().find("Unable to contact slurm controller"), std::string::npos);
}

TEST_F(CommandSlurmJobsTest, CancelRunsScancelForAPendingJob) {
  Fake("scancel", "exit 0");
  EXPECT_TRUE(jobs_->Cancel("77").ok());
  EXPECT_EQ(Args("scancel"), "--state=PENDING\n77\n");
}

TEST_F(CommandSlurmJobsTest, CancellingAJobSlurmNoLongerKnowsIsNotFound) {
  Fake("scancel", "echo 'scancel: error: Kill job error on job id 77: Invalid job id specified' >&2; exit 1");
  EXPECT_EQ(jobs_->Cancel("77").code(), Code::kNotFound);
  Fake("scancel", "echo 'scancel: error: Unable to contact slurm controller' >&2; exit 1");
  EXPECT_EQ(jobs_->Cancel("77").code(), Code::kUnavailable);
}

TEST_F(CommandSlurmJobsTest, CancelRefusesAnIdThatIsNotANumber) {
  Fake("scancel", "exit 0");
  EXPECT_EQ(jobs_->Cancel("-u").code(), Code::kInvalidArgument);
  EXPECT_EQ(jobs_->Cancel("").code(), Code::kInvalidArgument);
  EXPECT_EQ(Args("scancel"), "") << "scancel ran";
}

TEST_F(CommandSlurmJobsTest, AMissingCommandIsUnavailable) {
  ASSERT_EQ(setenv("PATH", dir_.path().c_str(), 1), 0);  // no squeue anywhere
  auto jobs = jobs_->List("scimesh-alloc-t");
  EXPECT_EQ(jobs.status().code(), Code::kUnavailable);
}

}  // namespace
}  // namespace scimesh::alloc

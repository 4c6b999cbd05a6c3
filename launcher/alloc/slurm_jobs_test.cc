// Unit tests for sbatch/squeue/scancel: the command lines, the parsing of
// what they print, the request checks, and CommandSlurmJobs against fake
// commands put first in PATH.
#include "launcher/alloc/slurm_jobs.h"

#include <sys/stat.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/support/test_dir.h"

namespace scimesh::alloc {
namespace {

using Argv = std::vector<std::string>;

JobRequest Request() {
  JobRequest r;
  r.tag = "scimesh-alloc-mesh";
  r.shape = Shape{2, 3600, 8, 0};
  r.output = "/scratch/ana/scimesh-alloc-%j.out";
  r.script = "/scratch/ana/scimesh-alloc.sh";
  return r;
}

TEST(SbatchArgvTest, AsksForTheShapeByNameAndTime) {
  EXPECT_EQ(SbatchArgv(Request(), false),
            (Argv{"sbatch", "--parsable", "--job-name=scimesh-alloc-mesh", "--nodes=2", "--ntasks-per-node=8",
                  "--time=01:00:00", "--signal=B:USR1@180", "--output=/scratch/ana/scimesh-alloc-%j.out",
                  "/scratch/ana/scimesh-alloc.sh"}));
}

TEST(SbatchArgvTest, PassesGpusPartitionAccountQosAndExtraArgsBeforeTheScript) {
  JobRequest r = Request();
  r.shape = Shape{1, 90000, 0, 4};
  r.partition = "gpu";
  r.account = "proj1";
  r.qos = "high";
  r.signal_s = 300;
  r.output.clear();
  r.extra_args = {"--mem=0", "--constraint=a100"};
  EXPECT_EQ(SbatchArgv(r, true),
            (Argv{"sbatch", "--test-only", "--job-name=scimesh-alloc-mesh", "--nodes=1", "--gres=gpu:4",
                  "--time=1-01:00:00", "--signal=B:USR1@300", "--partition=gpu", "--account=proj1", "--qos=high",
                  "--mem=0", "--constraint=a100", "/scratch/ana/scimesh-alloc.sh"}));
}

TEST(CheckJobRequestTest, TakesAPlainRequest) {
  EXPECT_TRUE(CheckJobRequest(Request()).ok());
  JobRequest r = Request();
  r.tag = "scimesh-alloc-mesh+poisson_2.1";  // the default name of two workflows
  r.partition = "a,b";  // a list is SLURM's own syntax
  r.extra_args = {"--comment=two words", "-x", ""};
  EXPECT_TRUE(CheckJobRequest(r).ok());
}

TEST(CheckJobRequestTest, RefusesWhatSbatchCouldReadAsSomethingElse) {
  struct Case {
    const char* name;
    void (*mutate)(JobRequest&);
    const char* field;
  };
  const Case cases[] = {
      {"empty tag", [](JobRequest& r) { r.tag.clear(); }, "tag"},
      {"tag as an option", [](JobRequest& r) { r.tag = "-A"; }, "tag"},
      {"tag with a comma", [](JobRequest& r) { r.tag = "mine,theirs"; }, "tag"},
      {"tag with a newline", [](JobRequest& r) { r.tag = "a\nb"; }, "tag"},
      {"tag with a space", [](JobRequest& r) { r.tag = "a b"; }, "tag"},
      {"long tag", [](JobRequest& r) { r.tag = std::string(129, 'a'); }, "tag"},
      {"partition as an option", [](JobRequest& r) { r.partition = "--wrap=id"; }, "partition"},
      {"partition with a newline", [](JobRequest& r) { r.partition = "p\n#SBATCH"; }, "partition"},
      {"account as an option", [](JobRequest& r) { r.account = "-p"; }, "account"},
      {"account with a tab", [](JobRequest& r) { r.account = "a\tb"; }, "account"},
      {"qos with a newline", [](JobRequest& r) { r.qos = "q\n"; }, "qos"},
      {"qos as an option", [](JobRequest& r) { r.qos = "-q"; }, "qos"},
      {"output as an option", [](JobRequest& r) { r.output = "-e"; }, "output"},
      {"script as an option", [](JobRequest& r) { r.script = "--help"; }, "script"},
      {"empty script", [](JobRequest& r) { r.script.clear(); }, "script"},
      {"extra arg with a newline", [](JobRequest& r) { r.extra_args = {"--mem=1", "--x\n"}; }, "extra_args"},
      {"extra arg with a NUL", [](JobRequest& r) { r.extra_args = {std::string("a\0b", 3)}; }, "extra_args"},
      {"no nodes", [](JobRequest& r) { r.shape.nodes = 0; }, "shape"},
      {"time under a minute", [](JobRequest& r) { r.shape.time_s = 59; }, "shape"},
      {"negative gpus", [](JobRequest& r) { r.shape.gpus_per_node = -1; }, "shape"},
      {"negative signal", [](JobRequest& r) { r.signal_s = -1; }, "signal_s"},
      {"signal too far", [](JobRequest& r) { r.signal_s = 65536; }, "signal_s"},
  };
  for (const auto& c : cases) {
    JobRequest r = Request();
    c.mutate(r);
    const Status status = CheckJobRequest(r);
    EXPECT_EQ(status.code(), Code::kInvalidArgument) << c.name;
    EXPECT_EQ(status.field().value_or(""), c.field) << c.name << ": " << status.message();
  }
}

TEST(ParseSbatchJobIdTest, TakesTheIdWithOrWithoutACluster) {
  const std::pair<const char*, const char*> cases[] = {
      {"123\n", "123"}, {"123", "123"}, {"4567;cluster1\n", "4567"}, {"\n88\n\n", "88"}};
  for (const auto& [text, id] : cases) {
    auto got = ParseSbatchJobId(text);
    ASSERT_TRUE(got.ok()) << text << ": " << got.status().ToString();
    EXPECT_EQ(*got, id) << text;
  }
}

TEST(ParseSbatchJobIdTest, RefusesWhatIsNotAJobId) {
  for (const char* text : {"", "\n", "12_3\n", "Submitted batch job 12\n", "abc", "-1", ";c", "12 \n",
                           "123456789012345678901"}) {
    auto got = ParseSbatchJobId(text);
    EXPECT_EQ(got.status().code(), Code::kInvalidArgument) << "'" << text << "'";
  }
}

TEST(SqueueArgvTest, ListsThisUsersJobsByName) {
  EXPECT_EQ(SqueueArgv("scimesh-alloc-mesh"),
            (Argv{"squeue", "-h", "--me", "--name=scimesh-alloc-mesh", "-o", "%i|%T|%D|%l|%M"}));
}

TEST(ScancelArgvTest, CancelsOneJobOnlyWhilePending) {
  EXPECT_EQ(ScancelArgv("77"), (Argv{"scancel", "--state=PENDING", "77"}));
}

OurJob Job(std::string id, bool pending, int64_t nodes, int64_t limit, int64_t ran) {
  return OurJob{std::move(id), pending, nodes, limit, ran};
}

TEST(ParseSqueueTest, ReadsEachLineOfTheFormat) {
  struct Case {
    const char* line;
    OurJob job;
  };
  const Case cases[] = {
      {"10|PENDING|2|1:00:00|0:00", Job("10", true, 2, 3600, 0)},
      {"10|CONFIGURING|2|30:00|0:05", Job("10", true, 2, 1800, 0)},
      {"10|REQUEUE_HOLD|1|1-00:00:00|0:00", Job("10", true, 1, 86400, 0)},
      {"10|REQUEUED|1|5|0:00", Job("10", true, 1, 300, 0)},
      {"10|SUSPENDED|1|1:00:00|12:00", Job("10", true, 1, 3600, 0)},
      {"10|RUNNING|4|2-00:00:00|1:02:03", Job("10", false, 4, 172800, 3723)},
      {"10|RUNNING|1|UNLIMITED|1-02:03:04", Job("10", false, 1, 0, 93784)},
      {"10|RUNNING|1|NOT_SET|0:42", Job("10", false, 1, 0, 42)},
      {"10|COMPLETING|1|1:00:00|59:59", Job("10", false, 1, 3600, 3599)},
      {"10|RUNNING|1|1:00:00|INVALID", Job("10", false, 1, 3600, 0)},
      {"10|PENDING|3|1:00:00|INVALID", Job("10", true, 3, 3600, 0)},
      {"10|PENDING|1|1:00:00|0:00\r", Job("10", true, 1, 3600, 0)},
  };
  for (const auto& c : cases) {
    auto jobs = ParseSqueue(std::string(c.line) + "\n");
    ASSERT_TRUE(jobs.ok()) << c.line << ": " << jobs.status().ToString();
    ASSERT_EQ(jobs->size(), 1u) << c.line;
    EXPECT_EQ((*jobs)[0], c.job) << c.line;
  }
}

TEST(ParseSqueueTest, LeavesOutJobsThatHaveEnded) {
  for (const char* state :
       {"COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY", "BOOT_FAIL"}) {
    auto jobs = ParseSqueue("10|" + std::string(state) + "|1|1:00:00|0:10\n");
    ASSERT_TRUE(jobs.ok()) << state << ": " << jobs.status().ToString();
    EXPECT_TRUE(jobs->empty()) << state;
  }
  auto none = ParseSqueue("");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(ParseSqueueTest, SortsByJobIdNumerically) {
  auto jobs = ParseSqueue(
      "100|PENDING|1|1:00:00|0:00\n"
      "9|RUNNING|1|1:00:00|10:00\n"
      "20|PENDING|1|1:00:00|0:00\n"
      "15|CANCELLED|1|1:00:00|0:00\n");
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  std::vector<std::string> ids;
  for (const auto& job : *jobs) ids.push_back(job.job_id);
  EXPECT_EQ(ids, (std::vector<std::string>{"9", "20", "100"}));
}

TEST(ParseSqueueTest, RefusesALineOutOfFormatQuotingIt) {
  for (const char* line : {"10|PENDING|1|1:00:00", "10|PENDING|1|1:00:00|0:00|x", "10 PENDING 1 1:00:00 0:00",
                           "12_3|PENDING|1|1:00:00|0:00", "|PENDING|1|1:00:00|0:00", "10|WAITING|1|1:00:00|0:00",
                           "10|PENDING|two|1:00:00|0:00", "10|PENDING||1:00:00|0:00", "10|PENDING|-1|1:00:00|0:00",
                           "10|PENDING|1|INVALID|0:00", "10|RUNNING|1|1:00:00|-5", "10|RUNNING|1|1:00:00|"}) {
    auto jobs = ParseSqueue("9|PENDING|1|1:00:00|0:00\n" + std::string(line) + "\n");
    EXPECT_EQ(jobs.status().code(), Code::kInvalidArgument) << line;
    EXPECT_NE(jobs.status().message().find(line), std::string::npos) << jobs.status().message();
  }
}

TEST(ParseSqueueTest, QuotesALongLineBounded) {
  const std::string line = "10|PENDING|1|1:00:00|" + std::string(500, 'x');
  auto jobs = ParseSqueue(line);
  EXPECT_EQ(jobs.status().code(), Code::kInvalidArgument);
  EXPECT_NE(jobs.status().message().find(line.substr(0, 120)), std::string::npos);
  EXPECT_EQ(jobs.status().message().find(line.substr(0, 121)), std::string::npos);
}

}  // namespace
}  // namespace scimesh::alloc

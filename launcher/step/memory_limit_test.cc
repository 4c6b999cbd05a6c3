// A step killed by its allocation's memory limit is told apart and handed
// back `unservable`; other SIGKILLs are not. The srun texts are what SLURM
// 22.05 printed on the dev cluster with --cgroup.
#include "launcher/step/memory_limit.h"

#include <gtest/gtest.h>
#include <signal.h>

namespace scimesh::launcher {
namespace {

TEST(MemoryLimitTest, AnAgentsCountNamesTheLimitAndTheNode) {
  ExitInfo exit{true, SIGKILL, 512};
  auto r = MemoryLimitFailure(exit, "", "n2");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->error_class(), FailClass::kUnservable);
  EXPECT_NE(r->message().find("killed by the allocation's memory limit, 512 MiB on n2"), std::string::npos)
      << r->message();
}

TEST(MemoryLimitTest, SrunsOutOfMemoryLineNamesTheNode) {
  const char* err =
      "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=9.0. Some of your processes may have been killed "
      "by the cgroup out-of-memory handler.\n"
      "srun: error: n2: task 1: Out Of Memory\n";
  auto r = MemoryLimitFailure(ExitInfo{false, 137}, err, "n1");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->error_class(), FailClass::kUnservable);
  EXPECT_NE(r->message().find("memory limit on n2"), std::string::npos) << r->message();
  // With sbatch --mem, SLURM_MEM_PER_NODE gives the limit.
  auto with = MemoryLimitFailure(ExitInfo{false, 137}, err, "n1", 256);
  EXPECT_NE(with->message().find("memory limit, 256 MiB on n2"), std::string::npos) << with->message();
}

TEST(MemoryLimitTest, OtherKillsAreNotTheLimit) {
  EXPECT_FALSE(MemoryLimitFailure(ExitInfo{true, SIGKILL}, "", "n1").has_value());
  EXPECT_FALSE(MemoryLimitFailure(ExitInfo{false, 137}, "srun: error: n2: task 1: Killed\n", "n1").has_value());
  // The words inside a step's own output do not count.
  EXPECT_FALSE(MemoryLimitFailure(ExitInfo{false, 1}, "my program: Out Of Memory\n", "n1").has_value());
}

}  // namespace
}  // namespace scimesh::launcher

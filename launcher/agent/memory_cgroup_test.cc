// The OOM killer's count and the limit, read from a cgroup tree laid out as
// the kernel does (cgroup v1 and v2), under a temporary directory.
#include "launcher/agent/memory_cgroup.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>

#include "tests/support/test_dir.h"

namespace scimesh::agent {
namespace {

void Put(const std::string& dir, const std::string& name, const std::string& text) {
  std::filesystem::create_directories(dir);
  TestDir::Write(dir + "/" + name, text);
}

std::string OomControl(int kills) {
  return "oom_kill_disable 0\nunder_oom 0\noom_kill " + std::to_string(kills) + "\n";
}

TEST(MemoryCgroupTest, V1SumsTheKillsOnThePathAndTakesTheSmallestLimit) {
  TestDir t;
  const std::string mount = t / "memory";
  // slurm_n1/uid_0/job_7 holds the job's limit; step_0 the step's (larger here).
  Put(mount, "memory.limit_in_bytes", "9223372036854771712\n");
  Put(mount, "memory.oom_control", OomControl(5));  // the machine's root: other jobs' kills
  Put(mount + "/slurm_n1/uid_0", "memory.limit_in_bytes", "9223372036854771712\n");
  Put(mount + "/slurm_n1/uid_0/job_7", "memory.limit_in_bytes", "104857600\n");
  Put(mount + "/slurm_n1/uid_0/job_7", "memory.oom_control", OomControl(1));
  Put(mount + "/slurm_n1/uid_0/job_7/step_0", "memory.limit_in_bytes", "209715200\n");
  Put(mount + "/slurm_n1/uid_0/job_7/step_0", "memory.oom_control", OomControl(2));
  const std::string mounts = "cgroup " + t.path() + "/cpu cgroup rw,relatime,cpu 0 0\ncgroup " + mount +
                             " cgroup rw,relatime,memory 0 0\n";
  auto m = ReadMemoryCgroup("4:memory:/slurm_n1/uid_0/job_7/step_0\n3:cpuset:/x\n", mounts);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->oom_kills, 8);  // 2 + 1 + 5: v1 counts each limit's own kills
  EXPECT_EQ(m->limit_bytes, 104857600);
}

TEST(MemoryCgroupTest, V2TakesTheLargestCountOnThePath) {
  TestDir t;
  const std::string mount = t / "unified";
  Put(mount + "/job", "memory.max", "max\n");
  Put(mount + "/job", "memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n");
  Put(mount + "/job/step", "memory.max", "52428800\n");
  Put(mount + "/job/step", "memory.events", "oom 0\noom_kill 0\n");
  auto m = ReadMemoryCgroup("0::/job/step\n", "cgroup2 " + mount + " cgroup2 rw 0 0\n");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->oom_kills, 1);  // v2 counts a subtree's kills in each ancestor
  EXPECT_EQ(m->limit_bytes, 52428800);
}

TEST(MemoryCgroupTest, NoMemoryHierarchyOrAPathThatClimbsOutIsNone) {
  TestDir t;
  EXPECT_FALSE(ReadMemoryCgroup("3:cpuset:/\n", "cgroup /x cgroup rw,cpuset 0 0\n").has_value());
  EXPECT_FALSE(ReadMemoryCgroup("4:memory:/../../etc\n", "cgroup " + t.path() + " cgroup rw,memory 0 0\n")
                   .has_value());
  EXPECT_FALSE(ReadMemoryCgroup("4:memory:/gone\n", "cgroup " + t.path() + "/none cgroup rw,memory 0 0\n")
                   .has_value());
}

TEST(MemoryCgroupTest, OnlyASigkillWhileTheCountRoseIsTheLimit) {
  const MemoryCgroup before{3, 100 << 20};
  const MemoryCgroup after{4, 100 << 20};
  EXPECT_EQ(MemoryLimitKillMib(before, after, true, SIGKILL), 100);
  EXPECT_EQ(MemoryLimitKillMib(before, before, true, SIGKILL), 0);  // a person's kill -9
  EXPECT_EQ(MemoryLimitKillMib(before, after, true, SIGTERM), 0);
  EXPECT_EQ(MemoryLimitKillMib(before, after, false, 9), 0);  // exit status 9
  EXPECT_EQ(MemoryLimitKillMib(std::nullopt, after, true, SIGKILL), 0);
  EXPECT_EQ(MemoryLimitKillMib(MemoryCgroup{0, 0}, MemoryCgroup{1, 0}, true, SIGKILL), -1);
}

TEST(MemoryCgroupTest, ThisProcessReadsWithoutFailing) {
  // On a machine without a memory cgroup it is nullopt; with one, a count.
  auto m = ReadOwnMemoryCgroup();
  if (m) {
    EXPECT_GE(m->oom_kills, 0);
  }
}

}  // namespace
}  // namespace scimesh::agent

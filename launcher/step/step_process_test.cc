// Unit tests for spawning and stopping a step's process group.
#include "launcher/step/step_process.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace scimesh::launcher {
namespace {

class StepProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/scimesh-step-process-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  SpawnSpec Spec(std::vector<std::string> argv) {
    return {std::move(argv), {{"STEP_VAR", "42"}}, dir_, dir_ + "/out", dir_ + "/err", {}, false};
  }
  std::string Read(const std::string& name) {
    std::ifstream in(dir_ + "/" + name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::string dir_;
};

TEST_F(StepProcessTest, RunsInItsDirectoryWithItsEnvironment) {
  auto p = StepProcess::Spawn(Spec({"/bin/sh", "-c", "pwd; echo $STEP_VAR; echo oops >&2; exit 3"}));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto e = p->WaitFor(std::chrono::seconds(10));
  ASSERT_TRUE(e.has_value());
  EXPECT_FALSE(e->signaled);
  EXPECT_EQ(e->code, 3);
  EXPECT_EQ(e->Describe(), "exit status 3");
  EXPECT_EQ(Read("out"), dir_ + "\n42\n");
  EXPECT_EQ(Read("err"), "oops\n");
}

TEST_F(StepProcessTest, AMissingProgramIsAClearError) {
  auto p = StepProcess::Spawn(Spec({"/nonexistent/solver"}));
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("cannot start 'solver'"), std::string::npos) << p.status().message();
  EXPECT_EQ(p.status().message().find("/nonexistent"), std::string::npos);  // no local paths
}

TEST_F(StepProcessTest, StopReachesTheWholeGroupAndEscalates) {
  // The shell ignores TERM, and so does its background child: only KILL ends them.
  auto p = StepProcess::Spawn(Spec({"/bin/sh", "-c", "trap '' TERM; (trap '' TERM; sleep 60) & echo $! > child; wait"}));
  ASSERT_TRUE(p.ok());
  for (int i = 0; i < 200 && Read("child").empty(); ++i) usleep(10000);
  const pid_t child = std::stoi(Read("child"));
  ExitInfo e = p->Stop(std::chrono::milliseconds(300));
  EXPECT_TRUE(e.signaled);
  EXPECT_EQ(e.code, SIGKILL);
  EXPECT_NE(e.Describe().find("signal 9"), std::string::npos);
  // The grandchild was in the group too.
  for (int i = 0; i < 200 && ::kill(child, 0) == 0; ++i) usleep(10000);
  EXPECT_NE(::kill(child, 0), 0);
}

TEST_F(StepProcessTest, SignalDeathIsReported) {
  auto p = StepProcess::Spawn(Spec({"/bin/sh", "-c", "kill -SEGV $$"}));
  ASSERT_TRUE(p.ok());
  auto e = p->WaitFor(std::chrono::seconds(10));
  ASSERT_TRUE(e.has_value());
  EXPECT_TRUE(e->signaled);
  EXPECT_EQ(e->code, SIGSEGV);
}

// What scimesh-rank did for a single rank, the launcher now does when it
// forks one itself: the key stays home, the program is bound to its PUs.
TEST_F(StepProcessTest, AKeylessStepInheritsNeitherKeyVariable) {
  ::setenv("SCIMESH_TOKEN_FILE", "/etc/scimesh/key", 1);
  ::setenv("SCIMESH_TOKEN", "sk-secret", 1);
  SpawnSpec spec = Spec({"/bin/sh", "-c", "env"});
  spec.keyless = true;
  auto p = StepProcess::Spawn(spec);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_TRUE(p->WaitFor(std::chrono::seconds(10)));
  const std::string env = Read("out");
  EXPECT_EQ(env.find("SCIMESH_TOKEN"), std::string::npos) << env;
  EXPECT_NE(env.find("STEP_VAR=42"), std::string::npos);

  spec.keyless = false;  // native programs and scimesh-rank need it
  auto q = StepProcess::Spawn(spec);
  ASSERT_TRUE(q.ok());
  ASSERT_TRUE(q->WaitFor(std::chrono::seconds(10)));
  EXPECT_NE(Read("out").find("SCIMESH_TOKEN_FILE=/etc/scimesh/key"), std::string::npos);
  ::unsetenv("SCIMESH_TOKEN_FILE");
  ::unsetenv("SCIMESH_TOKEN");
}

std::string AllowedList(const std::string& status) {
  const auto at = status.find("Cpus_allowed_list:");
  if (at == std::string::npos) return "<none>";
  const auto end = status.find('\n', at);
  std::string v = status.substr(at + 18, end - at - 18);
  v.erase(0, v.find_first_not_of(" \t"));
  return v;
}

TEST_F(StepProcessTest, APinnedStepRunsOnItsPusAndAPinOutsideWhatIsAllowedIsIgnored) {
  cpu_set_t mine;
  ASSERT_EQ(::sched_getaffinity(0, sizeof mine, &mine), 0);
  int last = -1;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &mine)) last = c;
  }
  ASSERT_GE(last, 0);
  SpawnSpec spec = Spec({"/bin/cat", "/proc/self/status"});
  spec.pin = {last};
  auto p = StepProcess::Spawn(spec);
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(p->WaitFor(std::chrono::seconds(10)));
  EXPECT_EQ(AllowedList(Read("out")), std::to_string(last));

  // Only PUs this process may not use: the scheduler's binding wins.
  spec.pin = {CPU_SETSIZE + 5, -1};
  auto q = StepProcess::Spawn(spec);
  ASSERT_TRUE(q.ok());
  ASSERT_TRUE(q->WaitFor(std::chrono::seconds(10)));
  spec.pin = {};
  auto r = StepProcess::Spawn({{"/bin/cat", "/proc/self/status"}, {}, dir_, dir_ + "/unpinned", dir_ + "/err2", {}, false});
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->WaitFor(std::chrono::seconds(10)));
  EXPECT_EQ(AllowedList(Read("out")), AllowedList(Read("unpinned")));
}

}  // namespace
}  // namespace scimesh::launcher

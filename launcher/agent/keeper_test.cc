#include "launcher/agent/keeper.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <optional>

#include <gtest/gtest.h>

namespace scimesh::agent {
namespace {

// A child in a process group of its own that sleeps until killed.
pid_t Sleeper() {
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    ::execl("/bin/sleep", "sleep", "600", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  return pid;
}

// Reaps `pid`; the signal that killed it, or nullopt if it is still running
// after the keeper is gone (it is then killed here, not left behind).
std::optional<int> KilledBy(pid_t pid) {
  int status = 0;
  for (int i = 0; i < 2000; ++i) {
    if (::waitpid(pid, &status, WNOHANG) == pid) return WIFSIGNALED(status) ? WTERMSIG(status) : -1;
    ::usleep(5000);
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return std::nullopt;
}

// Failure modelled: the agent dies with a step running. The keeper, seeing
// its pipe end, must SIGKILL every group still recorded -- and only those:
// a group the agent forgot (its step was swept and reaped) may belong to
// someone else by now.
TEST(Keeper, WhenThePipeEndsTrackedGroupsAreKilledAndForgottenOnesAreNot) {
  const pid_t tracked = Sleeper(), forgotten = Sleeper();
  {
    auto keeper = Keeper::Start();
    ASSERT_TRUE(keeper.ok()) << keeper.status().ToString();
    ASSERT_TRUE(keeper->Track(tracked));
    ASSERT_TRUE(keeper->Track(forgotten));
    ASSERT_TRUE(keeper->Forget(forgotten));
  }  // the pipe closes as the agent's death would close it; the keeper is reaped
  EXPECT_EQ(KilledBy(tracked), SIGKILL);
  ::kill(forgotten, SIGTERM);
  EXPECT_EQ(KilledBy(forgotten), SIGTERM) << "the keeper killed a group the agent had forgotten";
}

// The keeper is not taken away by signals aimed at the agent: it ignores
// TERM/INT/HUP, so it is still there to do its job when the pipe ends.
TEST(Keeper, SurvivesTheSignalsThatStopTheAgent) {
  const pid_t step = Sleeper();
  {
    auto keeper = Keeper::Start();
    ASSERT_TRUE(keeper.ok());
    ASSERT_TRUE(keeper->Track(step));
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) ::kill(keeper->pid(), sig);
    ASSERT_TRUE(keeper->Track(step));  // still reading
  }
  EXPECT_EQ(KilledBy(step), SIGKILL);
}

}  // namespace
}  // namespace scimesh::agent

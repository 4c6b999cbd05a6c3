// scimesh-agent driven through the launcher's AgentChannel, as the launcher
// drives it: local processes, no SLURM. Each test names the attack or the
// failure it models and the defence it would catch missing.
#include <sys/resource.h>

#include "tests/launcher/agent_fixture.h"

namespace scimesh::launcher {
namespace {

using namespace agent_testing;

TEST_F(AgentTest, AStepRunsAndItsExitCodeAndSignalAreReported) {
  AgentChannel agent = Spawn();
  AgentStart s = Step("ok", "echo \"$GREETING\" \"${SCIMESH_AGENT_TEST_A-unset}\" \"${SCIMESH_AGENT_TEST_B-unset}\" "
                            "\"${SCIMESH_AGENT_KEPT-unset}\" \"${SLURM_PROCID-unset}\" \"${PMIX_RANK-unset}\" "
                            "> greeting.txt; exit 3");
  s.env = {{"GREETING", "hello"}};
  s.unset = {"SCIMESH_AGENT_TEST_*", "SCIMESH_AGENT_GONE"};
  ASSERT_TRUE(agent.Start(s).ok());
  AgentEvent started = Next(agent);
  ASSERT_EQ(started.kind, Kind::kStarted) << started.error;
  EXPECT_EQ(started.id, "ok");
  AgentEvent exited = Next(agent);
  ASSERT_EQ(exited.kind, Kind::kExited) << exited.error;
  EXPECT_EQ(exited.pid, started.pid);
  EXPECT_FALSE(exited.signaled);
  EXPECT_EQ(exited.code, 3);
  // cwd, env and unset applied to the agent's environment (set in Spawn).
  EXPECT_EQ(TestDir::Read(dir_ / "greeting.txt"), "hello unset unset kept unset unset\n");

  ASSERT_TRUE(agent.Start(Step("sig", "sleep 600")).ok());
  ASSERT_EQ(Next(agent).kind, Kind::kStarted);
  ASSERT_TRUE(agent.Signal("sig", SIGUSR1).ok());
  exited = Next(agent);
  ASSERT_EQ(exited.kind, Kind::kExited);
  EXPECT_TRUE(exited.signaled);
  EXPECT_EQ(exited.code, SIGUSR1);
}

// Failure modelled: a program that cannot start. The launcher must be told
// why (a `failed` event with the exec's errno), not guess from exit 127.
TEST_F(AgentTest, AnExecFailureIsReportedAsFailed) {
  AgentChannel agent = Spawn();
  AgentStart s = Step("nope", "");
  s.argv = {"/nonexistent/scimesh-no-such-program"};
  ASSERT_TRUE(agent.Start(s).ok());
  AgentEvent e = Next(agent);
  ASSERT_EQ(e.kind, Kind::kFailed);
  EXPECT_EQ(e.id, "nope");
  EXPECT_NE(e.error.find("cannot start 'scimesh-no-such-program': No such file or directory"), std::string::npos)
      << e.error;
  EXPECT_EQ(e.error.find("/nonexistent"), std::string::npos) << "a full path in: " << e.error;
}

// Attack: hostile lines on the agent's stdin (garbage, wrong types, a 2 MiB
// line, an unknown op, a signal for a step that does not exist). Each gets
// an `error` event naming the problem and the agent keeps serving: the ping
// after them is answered.
TEST_F(AgentTest, HostileLinesGetAnErrorAndTheAgentKeepsServing) {
  AgentChannel agent = Spawn();
  const std::pair<std::string, std::string> lines[] = {
      {"}}}{{{", "malformed JSON"},
      {R"({"op":"start","id":"x","argv":"rm -rf /"})", "argv: must be an array"},
      {R"({"op":"reboot"})", "unknown op 'reboot'"},
      {std::string(2 << 20, 'A'), "longer than 1048576 bytes"},
      {R"({"op":"signal","id":"ghost","signal":9})", "no running step with this id"},
  };
  for (const auto& [line, reason] : lines) {
    ASSERT_TRUE(agent.SendLine(line).ok());
    AgentEvent e = Next(agent);
    ASSERT_EQ(e.kind, Kind::kError) << reason;
    EXPECT_NE(e.error.find(reason), std::string::npos) << e.error;
  }
  ASSERT_TRUE(agent.Ping().ok());
  EXPECT_EQ(Next(agent).kind, Kind::kPong);
}

// Failure modelled: a lost lease on an agent-run step whose processes ignore
// SIGTERM, the grandchild in the background. `stop` must reach the whole
// process group and escalate to SIGKILL after the grace; without the group
// kill the grandchild survives, without the escalation both do.
TEST_F(AgentTest, StopKillsTheWholeProcessGroupAfterTheGrace) {
  AgentChannel agent = Spawn();
  const auto [leader, grandchild] = StartAndReadPids(agent, Stubborn("stubborn"));
  ASSERT_GT(leader, 0);
  ASSERT_GT(grandchild, 0);
  ASSERT_TRUE(agent.Stop("stubborn", 300ms).ok());
  AgentEvent exited = Next(agent);
  ASSERT_EQ(exited.kind, Kind::kExited);
  EXPECT_TRUE(exited.signaled);
  EXPECT_EQ(exited.code, SIGKILL);
  EXPECT_TRUE(GoneWithin(leader, 10s));
  EXPECT_TRUE(GoneWithin(grandchild, 10s)) << "the step's grandchild outlived stop";
}

// Failure modelled: the agent is SIGKILLed (OOM killer, a node cleanup) and
// cannot stop anything. Its keeper must kill the step's group; without the
// keeper the grandchild (no PDEATHSIG of its own) survives.
TEST_F(AgentTest, AKilledAgentLeavesNoStepProcess) {
  AgentChannel agent = Spawn();
  const auto [leader, grandchild] = StartAndReadPids(agent, Stubborn("orphan"));
  ASSERT_GT(grandchild, 0);
  ASSERT_EQ(::kill(agent.pid(), SIGKILL), 0);
  EXPECT_EQ(agent.WaitExit(kLong), 128 + SIGKILL);
  EXPECT_TRUE(GoneWithin(leader, 10s));
  EXPECT_TRUE(GoneWithin(grandchild, 10s)) << "a step process outlived its killed agent";
}

// Failure modelled: the launcher (or its srun) dies, so the agent's stdin
// ends. The agent itself must stop every step -- SIGTERM first (the leader's
// trap records it: the keeper alone would only SIGKILL), SIGKILL after
// --kill-grace-ms for what ignores SIGTERM -- report the exit and exit 0.
TEST_F(AgentTest, ClosingStdinStopsEveryStepAndTheAgentExitsZero) {
  AgentChannel agent = Spawn({"--kill-grace-ms", "300"});
  const auto [leader, grandchild] =
      StartAndReadPids(agent, TermRecorder("left"));
  ASSERT_GT(grandchild, 0);
  agent.Close();
  AgentEvent exited = Next(agent);
  EXPECT_EQ(exited.kind, Kind::kExited);
  EXPECT_EQ(exited.id, "left");
  EXPECT_EQ(agent.WaitExit(kLong), 0);
  EXPECT_TRUE(GoneWithin(leader, 10s));
  EXPECT_TRUE(GoneWithin(grandchild, 10s)) << "a step process outlived the launcher's channel";
  EXPECT_EQ(TestDir::Read(dir_ / "term.txt"), "term\n") << "the step was not sent SIGTERM first";
}

// Failure modelled: the launcher itself is SIGKILLed while an agent runs a
// step; no destructor of AgentChannel runs. The kernel closes the
// launcher's end of the channel, the agent reads EOF and must stop the step
// (SIGTERM first: the leader's trap records it) and exit -- no agent and no
// step left. Behind srun, srun must forward that EOF.
TEST_F(AgentTest, AKilledLauncherLeavesNoAgentAndNoStep) {
  int report[2];
  ASSERT_EQ(::pipe(report), 0);
  const pid_t launcher = ::fork();
  ASSERT_GE(launcher, 0);
  if (launcher == 0) {  // the launcher: starts an agent and a step, then waits to be killed
    ::close(report[0]);
    AgentChannel agent = Spawn({"--kill-grace-ms", "300"});
    const auto [leader, grandchild] = StartAndReadPids(agent, TermRecorder("launcher-died"));
    const pid_t pids[3] = {agent.pid(), leader, grandchild};
    (void)!::write(report[1], pids, sizeof pids);
    for (;;) ::pause();
  }
  ::close(report[1]);
  pid_t pids[3] = {-1, -1, -1};
  pollfd p{report[0], POLLIN, 0};
  if (::poll(&p, 1, 20000) == 1) (void)!::read(report[0], pids, sizeof pids);
  ::close(report[0]);
  ::kill(launcher, SIGKILL);
  int status = 0;
  ::waitpid(launcher, &status, 0);
  const auto [agent, leader, grandchild] = pids;
  ASSERT_GT(agent, 0);
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(GoneWithin(agent, 20s)) << "the agent outlived its launcher";
  EXPECT_TRUE(GoneWithin(leader, 10s));
  EXPECT_TRUE(GoneWithin(grandchild, 10s)) << "a step process outlived the launcher";
  EXPECT_EQ(TestDir::Read(dir_ / "term.txt"), "term\n") << "the agent did not stop the step itself";
}

// Failure modelled: the agent is told to end (SIGTERM: a node shutdown, a
// cancelled step). Same duty as a closed stdin; the exit status says which
// signal. Behind srun the SIGTERM reaches srun instead, which ends the
// agent's job step at once (SLURM SIGKILLs it, found by slurm-agent.sh):
// there only "no step process left" holds, which is why the launcher stops
// its agents by closing their stdin (docs/agent.md).
TEST_F(AgentTest, ASignalledAgentStopsEveryStepAndExits) {
  AgentChannel agent = Spawn({"--kill-grace-ms", "300"});
  const auto [leader, grandchild] = StartAndReadPids(agent, TermRecorder("signalled"));
  ASSERT_GT(grandchild, 0);
  ASSERT_EQ(::kill(agent.pid(), SIGTERM), 0);
  const bool direct = std::getenv("SCIMESH_AGENT_PREFIX") == nullptr;
  if (direct) {
    EXPECT_EQ(Next(agent).kind, Kind::kExited);
    EXPECT_EQ(agent.WaitExit(kLong), 128 + SIGTERM);
  }
  EXPECT_TRUE(GoneWithin(leader, 10s));
  EXPECT_TRUE(GoneWithin(grandchild, 10s)) << "a step process outlived its signalled agent";
  if (direct) {
    EXPECT_EQ(TestDir::Read(dir_ / "term.txt"), "term\n") << "the step was not sent SIGTERM first";
  }
}

// Failure modelled: an agent started with a small open-files limit (32)
// and more running steps than that; each step holds a pidfd in the agent.
// The agent raises its own soft limit, so all 40 start (without that,
// pidfd_open fails near 30); each step still gets the limit of 32 the agent
// was given, not the raised one.
TEST_F(AgentTest, ManyStepsRunUnderASmallFileLimitAndEachGetsThatLimit) {
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &old), 0);
  if (old.rlim_max <= 128) GTEST_SKIP() << "the hard limit leaves nothing to raise";
  rlimit low = old;
  low.rlim_cur = 32;
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  AgentChannel agent = Spawn();
  ::setrlimit(RLIMIT_NOFILE, &old);
  constexpr int kSteps = 40;
  for (int i = 0; i < kSteps; ++i) {
    // Each writes its own file, renamed into place once complete.
    const std::string n = std::to_string(i);
    std::string script = "ulimit -n > nofile";
    script.append(n).append(".part; mv nofile").append(n).append(".part nofile").append(n).append("; exec sleep 600");
    ASSERT_TRUE(agent.Start(Step("many" + n, script)).ok());
    AgentEvent e = Next(agent);
    ASSERT_EQ(e.kind, Kind::kStarted) << "step " << i << ": " << e.error;
  }
  EXPECT_EQ(PidFromFile(dir_ / ("nofile" + std::to_string(kSteps - 1))), 32);  // a number, like a pid
  agent.Close();  // stops all of them
  EXPECT_EQ(agent.WaitExit(kLong), 0);
}

// Pinning read back from the kernel: the step's Cpus_allowed_list is exactly
// the cpus it was started with. Without sched_setaffinity it is every cpu.
TEST_F(AgentTest, AStepIsPinnedToItsCpus) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs cpus 0 and 1";
  AgentChannel agent = Spawn();
  for (int cpu : {1, 0}) {
    AgentStart s = Step("pinned" + std::to_string(cpu), "exec sleep 600");
    s.cpus = {cpu};
    ASSERT_TRUE(agent.Start(s).ok());
    AgentEvent started = Next(agent);
    ASSERT_EQ(started.kind, Kind::kStarted) << started.error;
    std::ifstream status("/proc/" + std::to_string(started.pid) + "/status");
    std::string line, allowed;
    while (std::getline(status, line)) {
      if (line.rfind("Cpus_allowed_list:", 0) == 0) allowed = line.substr(line.find_first_not_of(" \t", 18));
    }
    EXPECT_EQ(allowed, std::to_string(cpu));
    ASSERT_TRUE(agent.Stop(s.id, 0ms).ok());
    EXPECT_EQ(Next(agent).kind, Kind::kExited);
  }
}

// A cpu the machine does not offer is refused at start, not ignored.
TEST_F(AgentTest, PinningToAMissingCpuFails) {
  AgentChannel agent = Spawn();
  AgentStart s = Step("far", "true");
  s.cpus = {1023};
  ASSERT_TRUE(agent.Start(s).ok());
  AgentEvent e = Next(agent);
  ASSERT_EQ(e.kind, Kind::kFailed);
  EXPECT_NE(e.error.find("cannot pin"), std::string::npos) << e.error;
}

}  // namespace
}  // namespace scimesh::launcher

// The fixture of the node agent's tests (agent_test.cc, agent_direct_test.cc):
// scimesh-agent started as the launcher starts it (a child of the test, or
// behind $SCIMESH_AGENT_PREFIX: srun), its events read with a bounded wait,
// and steps that record what happens to them.
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "launcher/step/agent_channel.h"
#include "tests/support/test_dir.h"

namespace scimesh::launcher::agent_testing {

using namespace std::chrono_literals;
using Kind = AgentEvent::Kind;

// Generous bounds: they only keep a broken agent from hanging the suite.
constexpr auto kLong = 20s;

// Alive and not a zombie (PID 1 in a container may never reap orphans).
inline bool Alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

// Waits (bounded) until `pid` is gone; true when it is.
inline bool GoneWithin(pid_t pid, std::chrono::seconds bound) {
  const auto until = std::chrono::steady_clock::now() + bound;
  while (Alive(pid)) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

// Reads a pid a step wrote to `path`, waiting (bounded) for it to appear.
inline pid_t PidFromFile(const std::string& path) {
  const auto until = std::chrono::steady_clock::now() + kLong;
  while (std::chrono::steady_clock::now() < until) {
    std::ifstream in(path);
    pid_t pid = 0;
    if (in >> pid && pid > 0) return pid;
    std::this_thread::sleep_for(20ms);
  }
  return -1;
}

class AgentTest : public ::testing::Test {
 protected:
  // The agent as a child of this test, or, with $SCIMESH_AGENT_PREFIX
  // ("srun --overlap -N1 -n1 -w n1", tests/launcher/slurm-agent.sh), behind
  // that prefix as the launcher starts it in an allocation. agent.pid() is
  // then srun's: killing or signalling it models the launcher's srun dying.
  // The agent's argv with `extra` options, behind $SCIMESH_AGENT_PREFIX if set.
  static std::vector<std::string> AgentArgv(const std::vector<std::string>& extra) {
    std::vector<std::string> argv;
    const char* prefix = std::getenv("SCIMESH_AGENT_PREFIX");
    std::istringstream words(prefix != nullptr ? prefix : "");
    for (std::string w; words >> w;) argv.push_back(w);
    argv.emplace_back(SCIMESH_AGENT_BIN);
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }

  AgentChannel Spawn(std::vector<std::string> extra = {}) {
    // The agent inherits these; a step may remove them with `unset`. srun's
    // task identity it never passes on.
    ::setenv("SLURM_PROCID", "3", 1);
    ::setenv("PMIX_RANK", "3", 1);
    ::setenv("SCIMESH_AGENT_TEST_A", "a", 1);
    ::setenv("SCIMESH_AGENT_TEST_B", "b", 1);
    ::setenv("SCIMESH_AGENT_KEPT", "kept", 1);
    auto channel = AgentChannel::Spawn(AgentArgv(extra));
    EXPECT_TRUE(channel.ok()) << channel.status().ToString();
    AgentEvent ready = Next(*channel);
    EXPECT_EQ(ready.kind, Kind::kReady);
    if (std::getenv("SCIMESH_AGENT_PREFIX") == nullptr) {
      EXPECT_EQ(ready.pid, channel->pid());
    }
    EXPECT_FALSE(ready.version.empty());
    return std::move(*channel);
  }

  // The next event, bounded wait; an error event of kind kError with text
  // "timeout" when none comes.
  AgentEvent Next(AgentChannel& channel) {
    if (queue_.empty()) {
      const auto until = std::chrono::steady_clock::now() + kLong;
      while (queue_.empty() && !channel.closed() && std::chrono::steady_clock::now() < until) {
        auto events = channel.WaitEvents(1s);
        EXPECT_TRUE(events.ok()) << events.status().ToString();
        if (!events.ok()) break;
        queue_.insert(queue_.end(), events->begin(), events->end());
      }
    }
    if (queue_.empty()) return AgentEvent{Kind::kError, "", 0, false, 0, "timeout or closed", "", ""};
    AgentEvent e = queue_.front();
    queue_.erase(queue_.begin());
    return e;
  }

  AgentStart Step(std::string id, std::string script) {
    AgentStart s;
    s.id = std::move(id);
    s.argv = {"/bin/sh", "-c", std::move(script)};
    s.cwd = dir_.path();
    s.stdout_path = s.id + ".out";  // a file name in cwd, as the launcher sends it
    s.stderr_path = dir_ / (s.id + ".err");
    return s;
  }

  // A step whose leader and background grandchild both ignore SIGTERM; each
  // writes its pid to a file in the test directory.
  AgentStart Stubborn(const std::string& id) {
    return Step(id, "trap '' TERM; sleep 600 & echo $! > gc.pid; echo $$ > leader.pid; wait");
  }

  // A step whose leader records SIGTERM in term.txt and waits on; its
  // grandchild ignores SIGTERM. Pids in leader.pid and gc.pid.
  AgentStart TermRecorder(const std::string& id) {
    return Step(id, "trap 'echo term > term.txt' TERM; (trap '' TERM; exec sleep 600) & "
                    "echo $! > gc.pid; echo $$ > leader.pid; wait; wait");
  }

  // Starts `s` (a step that writes leader.pid and gc.pid) and returns the
  // pids of its leader and its grandchild; -1 where one did not come.
  std::pair<pid_t, pid_t> StartAndReadPids(AgentChannel& agent, const AgentStart& s) {
    EXPECT_TRUE(agent.Start(s).ok());
    AgentEvent started = Next(agent);
    EXPECT_EQ(started.kind, Kind::kStarted) << started.error;
    if (started.kind != Kind::kStarted) return {-1, -1};
    return {PidFromFile(dir_ / "leader.pid"), PidFromFile(dir_ / "gc.pid")};
  }

  TestDir dir_;
  std::vector<AgentEvent> queue_;
};

}  // namespace scimesh::launcher::agent_testing

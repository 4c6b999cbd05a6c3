// scimesh_agent_bench: figures for the node agent through AgentChannel --
// no-op steps per second with K in flight, start -> started and
// started -> exited latencies, the agent's RSS with many steps running.
// Prints figures; asserts nothing (docs/performance.md holds the numbers).
//
//   scimesh_agent_bench AGENT [STEPS=2000] [IN_FLIGHT=64] [HELD=200]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include "launcher/step/agent_channel.h"

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using scimesh::launcher::AgentChannel;
using scimesh::launcher::AgentEvent;
using scimesh::launcher::AgentStart;
using Kind = AgentEvent::Kind;

namespace {

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

std::string Rss(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return line.substr(6 + line.substr(6).find_first_not_of(" \t"));
  }
  return "?";
}

AgentStart Step(int i, std::vector<std::string> argv) {
  AgentStart s;
  s.id = "s" + std::to_string(i);
  s.argv = std::move(argv);
  return s;
}

// Runs `steps` no-op steps, `in_flight` at a time; false on any failure.
bool Throughput(AgentChannel& agent, int steps, int in_flight) {
  std::map<std::string, Clock::time_point> sent, started;
  std::vector<double> to_started, to_exited;
  int next = 0, done = 0;
  const auto t0 = Clock::now();
  while (done < steps) {
    while (next < steps && static_cast<int>(sent.size()) < in_flight) {
      AgentStart s = Step(next++, {"/bin/true"});
      sent[s.id] = Clock::now();
      if (!agent.Start(s).ok()) return false;
    }
    auto events = agent.WaitEvents(10s);
    if (!events.ok() || events->empty()) {
      (void)std::fprintf(stderr, "no events: %s\n", events.status().ToString().c_str());
      return false;
    }
    for (const AgentEvent& e : *events) {
      const auto now = Clock::now();
      if (e.kind == Kind::kStarted) {
        to_started.push_back(Ms(now - sent[e.id]));
        started[e.id] = now;
      } else if (e.kind == Kind::kExited) {
        to_exited.push_back(Ms(now - started[e.id]));
        sent.erase(e.id);
        ++done;
      } else {
        (void)std::fprintf(stderr, "unexpected event for %s: %s\n", e.id.c_str(), e.error.c_str());
        return false;
      }
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  (void)std::printf("no-op steps (/bin/true): %d in %.2f s, %d in flight: %.0f steps/s\n", steps, seconds, in_flight,
              steps / seconds);
  (void)std::printf("start -> started: p50 %.2f ms, p99 %.2f ms\n", Percentile(to_started, 0.5),
              Percentile(to_started, 0.99));
  (void)std::printf("started -> exited: p50 %.2f ms, p99 %.2f ms\n", Percentile(to_exited, 0.5),
              Percentile(to_exited, 0.99));
  return true;
}

// Holds `held` sleeping steps and reports the agent's RSS, then stops them.
bool Held(AgentChannel& agent, int held) {
  for (int i = 0; i < held; ++i) {
    if (!agent.Start(Step(i, {"/bin/sleep", "600"})).ok()) return false;
  }
  for (int got = 0; got < held;) {
    auto events = agent.WaitEvents(10s);
    if (!events.ok() || events->empty()) return false;
    for (const auto& e : *events) got += e.kind == Kind::kStarted ? 1 : 0;
  }
  (void)std::printf("agent holding %d running steps: RSS %s (one thread)\n", held, Rss(agent.pid()).c_str());
  for (int i = 0; i < held; ++i) (void)agent.Stop("s" + std::to_string(i), 0ms);
  for (int got = 0; got < held;) {
    auto events = agent.WaitEvents(10s);
    if (!events.ok() || events->empty()) return false;
    for (const auto& e : *events) got += e.kind == Kind::kExited ? 1 : 0;
  }
  return true;
}

// A positive count from argv[i], or `fallback` when absent; 0 when malformed.
int Count(int argc, char** argv, int i, int fallback) {
  if (i >= argc) return fallback;
  char* end = nullptr;
  const long v = std::strtol(argv[i], &end, 10);
  return (*end == '\0' && v > 0 && v < 1000000) ? static_cast<int>(v) : 0;
}

int Run(int argc, char** argv) {
  const int steps = Count(argc, argv, 2, 2000), in_flight = Count(argc, argv, 3, 64), held = Count(argc, argv, 4, 200);
  if (argc < 2 || steps == 0 || in_flight == 0 || held == 0) {
    (void)std::fprintf(stderr, "usage: %s AGENT [STEPS] [IN_FLIGHT] [HELD]\n", argv[0]);
    return 2;
  }
  auto agent = AgentChannel::Spawn({argv[1]});
  if (!agent.ok()) {
    (void)std::fprintf(stderr, "%s\n", agent.status().ToString().c_str());
    return 1;
  }
  auto ready = agent->WaitEvents(10s);
  if (!ready.ok() || ready->empty() || (*ready)[0].kind != Kind::kReady) return 1;
  (void)std::printf("agent idle: RSS %s\n", Rss(agent->pid()).c_str());
  if (!Throughput(*agent, steps, in_flight) || !Held(*agent, held)) return 1;
  agent->Close();
  return agent->WaitExit(10s) == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {
    (void)std::fprintf(stderr, "scimesh_agent_bench: %s\n", e.what());
    return 1;
  }
}

// Figures for keeping many leases alive (prints, asserts nothing): threads,
// CPU and RSS of this process while it holds N leases beating every
// heartbeat_ms (default a second) against a fake coordinator in a child
// process, with one HeartbeatHub ("hub", as the launcher keeps its leases)
// or one HeartbeatLoop and Client per lease ("loop"); the same with a lease
// state file each (rewritten after every beat); then the same leases between beats
// (heartbeat_ms one hour): the idle cost. For the hub, also its thread's
// wake-ups per beat.
//
// Usage: scimesh_heartbeat_hub_bench [hub|loop] [leases=1000] [seconds=10] [heartbeat_ms=1000]
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "protocol/runtime/heartbeat_hub.h"
#include "protocol/runtime/heartbeat_loop.h"
#include "protocol/util/log.h"
#include "tests/client/hostile_server.h"
#include "tests/support/test_dir.h"

using namespace scimesh;
using testing::HostileServer;
using testing::RecordedRequest;
using testing::Reply;

namespace {

const std::string kExtend = R"({"lease_expires_at":"2026-11-29T08:00:41.300Z","lease_ttl_ms":30000})";

// utime + stime of this process, in seconds (/proc/self/stat fields 14, 15).
double CpuSeconds() {
  std::ifstream in("/proc/self/stat");
  std::string all((std::istreambuf_iterator<char>(in)), {});
  std::istringstream rest(all.substr(all.rfind(')') + 2));
  std::string field;
  long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stol(field);
    if (i == 15) stime = std::stol(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

// A field of /proc/self/status ("Threads", "VmRSS"), as its first number.
long StatusField(const std::string& name) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name + ":", 0) == 0) return std::strtol(line.c_str() + name.size() + 1, nullptr, 10);
  }
  return -1;
}

// The fake coordinator in a child process, so its threads and CPU are not
// counted here. Returns its port; it ends when `*keep_fd` is closed.
int StartCoordinator(pid_t* child, int* keep_fd) {
  int port_pipe[2], keep[2];
  if (::pipe(port_pipe) != 0 || ::pipe(keep) != 0) std::exit(2);
  *child = ::fork();
  if (*child == 0) {
    ::close(port_pipe[0]);
    ::close(keep[1]);
    auto server = HostileServer::Start([](const RecordedRequest&) { return Reply::Json(200, kExtend); });
    const int port = server->port();
    if (::write(port_pipe[1], &port, sizeof(port)) != sizeof(port)) std::_Exit(2);
    char c;
    while (::read(keep[0], &c, 1) > 0) {
    }
    std::set<int> connections;
    for (const auto& r : server->requests()) connections.insert(r.connection);
    std::printf("fake coordinator: %zu requests over %zu connections\n", server->requests().size(),
                connections.size());
    (void)std::fflush(stdout);
    std::_Exit(0);  // the server's threads die with the process
  }
  ::close(port_pipe[1]);
  ::close(keep[0]);
  int port = 0;
  if (::read(port_pipe[0], &port, sizeof(port)) != sizeof(port)) std::exit(2);
  *keep_fd = keep[1];
  return port;
}

struct Held {
  std::unique_ptr<HeartbeatHub> hub;
  std::vector<std::unique_ptr<Client>> clients;
  std::vector<std::unique_ptr<HeartbeatControl>> leases;
  std::vector<std::shared_ptr<CancellationToken>> tokens;
};

// `n` leases beating every `interval`, their cadences spread over `spread`
// (leases are claimed at different times). With `state_dir`, each lease's
// state file is there.
Held Hold(bool hub, int n, Millis interval, Millis spread, const ClientOptions& options,
          const std::string& state_dir = "") {
  Held h;
  if (hub) h.hub = HeartbeatHub::Create(options).value();
  const MonoTime now = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    HeartbeatConfig c;
    char id[32];
    (void)std::snprintf(id, sizeof(id), "l_%016x", i + 1);
    c.call = LeaseCall{id, 1, "w/bench", std::nullopt};
    c.interval = interval;
    c.granted_at = now - spread * i / n;
    c.deadline = LeaseDeadline::FromTtl(now, std::max(Millis(30000), interval * 3));  // halfway: past the phase
    if (!state_dir.empty()) c.state_path = state_dir + "/" + id + ".state";
    auto token = std::make_shared<CancellationToken>();
    h.tokens.push_back(token);
    if (hub) {
      h.leases.push_back(h.hub->Add(c, token));
    } else {
      h.clients.push_back(Client::Create(options).value());
      h.leases.push_back(std::make_unique<HeartbeatLoop>(*h.clients.back(), c, token));
    }
    if (!h.leases.back()->Start().ok()) std::exit(3);
  }
  return h;
}

int64_t Beats(const Held& h) {
  int64_t b = 0;
  for (const auto& l : h.leases) b += l->beats();
  return b;
}

void Measure(const char* what, const Held& h, int seconds) {
  const int64_t beats0 = Beats(h);
  const HeartbeatHub::Counts counts0 = h.hub ? h.hub->counts() : HeartbeatHub::Counts{};
  const double cpu0 = CpuSeconds();
  const auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = CpuSeconds() - cpu0;
  int lost = 0;
  for (const auto& t : h.tokens) lost += t->cancelled() ? 1 : 0;
  const int64_t beats = Beats(h) - beats0;
  std::printf("%-22s %6.0f beats/s  cpu %6.2f %% of a core  threads %4ld  rss %6.1f MiB  leases lost %d", what,
              static_cast<double>(beats) / wall, 100.0 * cpu / wall, StatusField("Threads"),
              static_cast<double>(StatusField("VmRSS")) / 1024.0, lost);
  if (h.hub && beats > 0) {
    const HeartbeatHub::Counts counts = h.hub->counts();
    std::printf("  %.0f us cpu and %.2f wake-ups per beat (%.1f beats per round)",
                1e6 * cpu / static_cast<double>(beats),
                static_cast<double>(counts.wakeups - counts0.wakeups) / static_cast<double>(beats),
                static_cast<double>(counts.beats - counts0.beats) /
                    static_cast<double>(std::max<int64_t>(1, counts.beat_rounds - counts0.beat_rounds)));
  }
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  const bool hub = argc < 2 || std::string(argv[1]) != "loop";
  const int n = argc > 2 ? static_cast<int>(std::strtol(argv[2], nullptr, 10)) : 1000;
  const int seconds = argc > 3 ? static_cast<int>(std::strtol(argv[3], nullptr, 10)) : 10;
  const Millis interval(argc > 4 ? std::strtol(argv[4], nullptr, 10) : 1000);
  if (n <= 0 || seconds <= 0 || interval <= Millis(0)) {
    (void)std::fprintf(stderr, "usage: %s [hub|loop] [leases] [seconds] [heartbeat_ms]\n", argv[0]);
    return 2;
  }
  pid_t child = 0;
  int keep_fd = -1;
  const int port = StartCoordinator(&child, &keep_fd);  // before any thread: fork is safe
  log::SetLevel(spdlog::level::err);
  ClientOptions options;
  options.coordinator_url = "http://127.0.0.1:" + std::to_string(port);
  options.token = Token("bench-token");

  std::printf("%s: %d leases, %d s each phase, fake coordinator in pid %d\n", hub ? "HeartbeatHub" : "HeartbeatLoop", n,
              seconds, static_cast<int>(child));
  const auto settle = interval + Millis(1000);  // every lease has beaten
  {
    Held h = Hold(hub, n, interval, interval, options);
    std::this_thread::sleep_for(settle);
    Measure(("heartbeat_ms " + std::to_string(interval.count())).c_str(), h, seconds);
  }
  {
    TestDir dir;
    Held h = Hold(hub, n, interval, interval, options, dir.path());
    std::this_thread::sleep_for(settle);
    Measure("... with state files", h, seconds);
  }
  {
    Held h = Hold(hub, n, std::chrono::hours(1), Millis(1000), options);
    std::this_thread::sleep_for(std::chrono::seconds(1));
    Measure("between beats (idle)", h, seconds);
  }
  (void)std::fflush(stdout);
  ::close(keep_fd);  // the child prints its connection count and ends
  ::waitpid(child, nullptr, 0);
  return 0;
}

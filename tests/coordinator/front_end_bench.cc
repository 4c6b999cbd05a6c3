// Benchmark of the coordinator's HTTP front end under many and abusive
// clients, on loopback. Prints figures; never passes or fails on time.
//   held claims: N long-poll claims held at once; while held, health and
//     heartbeat latencies (a fresh connection each, 2 s timeout), and the
//     coordinator's thread count and RSS growth per held claim;
//   tricklers: M connections trickling one header byte every 500 ms
//     (reconnecting when cut) while 8 workers heartbeat their leases every
//     250 ms: lease-call latencies and whether any lease was lost;
//   flood: the same with the default connection caps, F keyless tricklers
//     spread over 10 other addresses, then 1,100 from the workers' address.
// Options: --claims N (10000)  --tricklers M (1000)  --flood F (9000; 0: none)
//          --probes P (200)
//          --seconds S (10, the trickle phase)  --binary PATH (another
//          scimesh-coordinator: the same figures before and after a change)
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "api_client.h"
#include "coordinator_process.h"
#include "raw_connection.h"

using scimesh::coordinator::testing::ApiClient;
using scimesh::coordinator::testing::CoordinatorProcess;
using scimesh::coordinator::testing::PostRequest;
using scimesh::coordinator::testing::RawConnection;
using scimesh::coordinator::testing::Reply;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kProbeTimeoutMs = 2000;

struct Options {
  int claims = 10000;
  int tricklers = 1000;
  int flood = 9000;
  int probes = 200;
  double seconds = 10;
  std::string binary;
};

// A line of /proc/PID/status ("Threads", "VmRSS"), as a number.
long ProcStatus(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) == 0) return std::atol(line.c_str() + field.size() + 1);
  }
  return -1;
}

// Latencies in ms of answered probes, and how many got no answer in time.
struct Probes {
  std::vector<double> ms;
  int timeouts = 0;
  int not_ok = 0;
  void Add(double latency_ms, int status) {
    if (status == 0) {
      ++timeouts;
      return;
    }
    if (status != 200) ++not_ok;
    ms.push_back(latency_ms);
  }
  void Print(const char* what) {
    std::sort(ms.begin(), ms.end());
    auto pct = [&](double q) { return ms.empty() ? 0 : ms[std::min(ms.size() - 1, static_cast<size_t>(q * ms.size()))]; };
    std::printf("  %-28s %4zu answered  p50 %7.2f ms  p99 %7.2f ms  max %7.2f ms  %d not 200  %d timed out (%d ms)\n",
                what, ms.size(), pct(0.5), pct(0.99), ms.empty() ? 0 : ms.back(), not_ok, timeouts, kProbeTimeoutMs);
  }
};

// One request on a fresh connection: the status (0: no answer in time) and
// how long it took.
int Probe(int port, const std::string& request, double* ms) {
  const auto t = Clock::now();
  RawConnection c(port);
  std::string got = c.ok() && c.Send(request) ? c.ReadResponse(kProbeTimeoutMs) : "";
  *ms = std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  if (got.rfind("HTTP/1.1 ", 0) != 0 || got.size() < 12) return 0;
  return std::atoi(got.substr(9, 3).c_str());
}

std::string Health() { return "GET /v1/api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"; }

std::unique_ptr<CoordinatorProcess> StartCoordinator(const Options& opt, int ttl_ms) {
  CoordinatorProcess::Options o;
  o.lease_ttl_ms = ttl_ms;
  o.heartbeat_ms = ttl_ms / 4;
  o.grace_ms = ttl_ms / 4;
  o.extra_args = {"--log-level", "warn"};
  o.binary = opt.binary;
  auto p = std::make_unique<CoordinatorProcess>(o);
  std::string why = p->Start();
  if (!why.empty()) {
    std::fprintf(stderr, "cannot start the coordinator: %s\n", why.c_str());
    std::exit(1);
  }
  return p;
}

// A started lease of `worker` (its own workflow, one run).
std::string StartedLease(CoordinatorProcess& p, const std::string& worker) {
  ApiClient w(p.port(), p.token("w2"));
  ApiClient exec(p.port(), p.token("exec"));
  w.Register(worker, R"([{"workflow":")" + worker + R"(","version":"1","steps":[{"id":"s"}]}])");
  exec.StartRun(worker);
  Reply claim = w.Claim(worker, 1, 5000);
  if (claim.status != 200 || !claim["leases"].IsArray() || claim["leases"].Empty()) return "";
  std::string lease = claim["leases"][0]["lease_id"].GetString();
  w.Started(lease, worker, 1);
  return lease;
}

std::string HeartbeatRequest(CoordinatorProcess& p, const std::string& lease, const std::string& worker) {
  return PostRequest("/v1/api/steps/" + lease + "/heartbeat", p.token("w2"),
                     R"({"worker_id":")" + worker + R"(","attempt":1})");
}

void HeldClaims(const Options& opt) {
  auto p = StartCoordinator(opt, 60000);
  const std::string lease = StartedLease(*p, "beat");
  ApiClient(p->port(), p->token("w1")).Register("held", R"([{"workflow":"idle","version":"1","steps":[{"id":"s"}]}])");
  const long threads0 = ProcStatus(p->pid(), "Threads"), rss0 = ProcStatus(p->pid(), "VmRSS");
  const std::string claim = PostRequest("/v1/api/steps/claim", p->token("w1"),
                                        R"({"worker_id":"held","max":1,"wait_ms":20000})");
  std::vector<RawConnection> held;
  held.reserve(static_cast<size_t>(opt.claims));
  const auto t0 = Clock::now();
  int refused = 0;
  for (int i = 0; i < opt.claims; ++i) {
    RawConnection c(p->port());
    if (!c.ok() || !c.Send(claim)) {
      ++refused;
      continue;
    }
    held.push_back(std::move(c));
  }
  const double open_s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::this_thread::sleep_for(std::chrono::seconds(1));  // let the last ones reach the handler
  const long threads1 = ProcStatus(p->pid(), "Threads"), rss1 = ProcStatus(p->pid(), "VmRSS");
  Probes health, beat;
  for (int i = 0; i < opt.probes; ++i) {
    double ms = 0;
    int s = Probe(p->port(), Health(), &ms);
    health.Add(ms, s);
    s = Probe(p->port(), HeartbeatRequest(*p, lease, "beat"), &ms);
    beat.Add(ms, s);
  }
  size_t still_held = 0;
  for (auto& c : held) {
    if (c.Poll().empty() && !c.closed()) ++still_held;
  }
  std::printf("held claims: %d sent in %.1f s (%d connections failed), %zu still held after the probes\n",
              opt.claims, open_s, refused, still_held);
  std::printf("  coordinator threads: %ld idle, %ld while held; RSS %ld KiB idle, %ld KiB held (%.1f KiB per held claim)\n",
              threads0, threads1, rss0, rss1, held.empty() ? 0.0 : double(rss1 - rss0) / double(held.size()));
  health.Print("health while held");
  beat.Print("heartbeat while held");
  std::fflush(stdout);
}

// Connections trickling a header byte every 500 ms (reconnecting when cut,
// as an attacker would) from the addresses `from` ("" = 127.0.0.1, the
// workers' own), while 8 workers heartbeat their leases every 250 ms, each on
// a fresh connection from 127.0.0.1.
void Trickle(const Options& opt, int connections, const std::vector<std::string>& from, const std::string& title) {
  constexpr int kWorkers = 8;
  auto p = StartCoordinator(opt, 2000);  // a lease lost after 2 s without a heartbeat (+0.5 s grace)
  std::vector<std::string> leases;
  for (int w = 0; w < kWorkers; ++w) leases.push_back(StartedLease(*p, "steady-" + std::to_string(w)));
  std::atomic<bool> stop{false};
  std::atomic<long> reconnects{0};
  const std::string head = "POST /v1/api/steps/claim HTTP/1.1\r\nX-Slow: ";
  std::thread trickle([&] {
    std::vector<RawConnection> conns;
    for (int i = 0; i < connections; ++i) {
      conns.emplace_back(p->port(), from[static_cast<size_t>(i) % from.size()]);
      conns.back().Send(head);
    }
    while (!stop) {
      for (size_t i = 0; i < conns.size() && !stop; ++i) {
        RawConnection& c = conns[i];
        if (c.Send("a") && (c.Poll(), !c.closed())) continue;
        c = RawConnection(p->port(), from[i % from.size()]);
        c.Send(head);
        ++reconnects;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  });
  std::this_thread::sleep_for(std::chrono::seconds(1));
  std::vector<Probes> per(kWorkers);
  std::vector<double> longest_gap_ms(kWorkers, 0);
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&, w] {
      const std::string worker = "steady-" + std::to_string(w);
      const auto end = Clock::now() + std::chrono::duration<double>(opt.seconds);
      auto last_ok = Clock::now();
      while (Clock::now() < end) {
        double ms = 0;
        int s = Probe(p->port(), HeartbeatRequest(*p, leases[static_cast<size_t>(w)], worker), &ms);
        per[static_cast<size_t>(w)].Add(ms, s);
        if (s == 200) {
          const double gap = std::chrono::duration<double, std::milli>(Clock::now() - last_ok).count();
          longest_gap_ms[static_cast<size_t>(w)] = std::max(longest_gap_ms[static_cast<size_t>(w)], gap);
          last_ok = Clock::now();
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(250));
      }
    });
  }
  for (auto& t : workers) t.join();
  stop = true;
  trickle.join();
  Probes all;
  for (auto& pr : per) {
    all.ms.insert(all.ms.end(), pr.ms.begin(), pr.ms.end());
    all.timeouts += pr.timeouts;
    all.not_ok += pr.not_ok;
  }
  int lost = 0;
  ApiClient w(p->port(), p->token("w2"));
  for (int i = 0; i < kWorkers; ++i) {
    lost += w.Complete(leases[static_cast<size_t>(i)], "steady-" + std::to_string(i), 1).status != 200;
  }
  std::printf("%s: %d connections trickling a header byte every 500 ms for %.0f s (%ld cut and reconnected)\n",
              title.c_str(), connections, opt.seconds, reconnects.load());
  all.Print("heartbeats (8 workers)");
  if (all.not_ok + all.timeouts == static_cast<int>(all.ms.size()) + all.timeouts) {
    std::printf("  longest time between two answered heartbeats of one worker: none was answered 200\n");
  } else {
    std::printf("  longest time between two answered heartbeats of one worker: %.0f ms (sent every 250 ms)\n",
                *std::max_element(longest_gap_ms.begin(), longest_gap_ms.end()));
  }
  std::printf("  leases lost (complete refused at the end): %d of %d\n", lost, kWorkers);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i], v = argv[i + 1];
    if (a == "--claims") opt.claims = std::atoi(v.c_str());
    if (a == "--tricklers") opt.tricklers = std::atoi(v.c_str());
    if (a == "--flood") opt.flood = std::atoi(v.c_str());
    if (a == "--probes") opt.probes = std::atoi(v.c_str());
    if (a == "--seconds") opt.seconds = std::atof(v.c_str());
    if (a == "--binary") opt.binary = v;
  }
  // Each held claim is a descriptor here and one in the coordinator.
  rlimit rl{};
  ::getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &rl);
  // Caps for a benchmark whose every client is 127.0.0.1 (a coordinator
  // that does not know these settings ignores them).
  ::setenv("SCIMESH_COORDINATOR_MAX_CONNECTIONS", "30000", 1);
  ::setenv("SCIMESH_COORDINATOR_MAX_CONNECTIONS_PER_ADDRESS", "30000", 1);
  std::printf("scimesh-coordinator front-end benchmark: loopback, %u hardware threads, descriptor limit %ld\n",
              std::thread::hardware_concurrency(), static_cast<long>(rl.rlim_cur));
  if (opt.claims > 0) HeldClaims(opt);
  if (opt.tricklers > 0) Trickle(opt, opt.tricklers, {""}, "tricklers");
  if (opt.flood > 0) {
    // The attacks on the default caps: keyless tricklers spread over ten
    // other addresses, then 1,100 from the workers' own address.
    ::unsetenv("SCIMESH_COORDINATOR_MAX_CONNECTIONS");
    ::unsetenv("SCIMESH_COORDINATOR_MAX_CONNECTIONS_PER_ADDRESS");
    std::vector<std::string> ten;
    for (int i = 2; i < 12; ++i) ten.push_back("127.0.0." + std::to_string(i));
    Trickle(opt, opt.flood, ten, "flood, default caps, from 10 other addresses");
    Trickle(opt, 1100, {""}, "flood, default caps, from the workers' own address");
  }
  return 0;
}

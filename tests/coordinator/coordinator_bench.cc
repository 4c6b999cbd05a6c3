// Benchmark of the real coordinator on loopback: claim -> started -> complete
// cycles per second with 1, 8 and 64 concurrent workers, and the latency from
// POST /runs to a waiting (long-poll) claim returning the first step.
// Prints figures; never passes or fails on time. Options:
//   --seconds S      per throughput case (default 3)
//   --samples N      latency samples (default 200)
//   --workers A,B,C  worker counts (default 1,8,64)
//   --binary PATH    another scimesh-coordinator (before/after comparisons)
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "api_client.h"
#include "coordinator_process.h"

using scimesh::coordinator::testing::ApiClient;
using scimesh::coordinator::testing::CoordinatorProcess;
using scimesh::coordinator::testing::Reply;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kStepsPerRun = 256;

std::string ManySteps() {
  std::string steps = "[";
  for (int i = 0; i < kStepsPerRun; ++i) steps += (i ? "," : "") + std::string(R"({"id":"s)") + std::to_string(i) + "\"}";
  return steps + "]";
}

double Throughput(CoordinatorProcess& p, int workers, double seconds) {
  std::atomic<bool> stop{false};
  std::atomic<long> cycles{0}, errors{0};
  std::atomic<long> stocked{0};
  // The feeder keeps enough queued steps ahead of the workers.
  std::thread feeder([&] {
    ApiClient exec(p.port(), p.token("exec"));
    while (!stop) {
      if (stocked - cycles < 4L * kStepsPerRun) {
        Reply r = exec.StartRun("bench");
        if (r.status == 201) stocked += kStepsPerRun;
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
    }
  });
  while (stocked < 2L * kStepsPerRun) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::vector<std::thread> threads;
  const auto begin = Clock::now();
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      const std::string id = "bench-" + std::to_string(w);
      ApiClient c(p.port(), p.token("w1"));
      c.Register(id, R"([{"workflow":"bench","version":"1","steps":)" + ManySteps() + "}]");
      while (!stop) {
        Reply claim = c.Claim(id, 1, 1000);
        if (claim.status != 200 || !claim["leases"].IsArray() || claim["leases"].Empty()) continue;
        std::string lease = claim["leases"][0]["lease_id"].GetString();
        bool ok = c.Started(lease, id, 1).status == 200 && c.Complete(lease, id, 1).status == 200;
        ok ? ++cycles : ++errors;
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& t : threads) t.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - begin).count();
  feeder.join();
  std::printf("  %3d workers  %7ld cycles  %5.2f s  %8.1f cycles/s%s\n", workers, cycles.load(), elapsed,
              cycles / elapsed, errors ? "  (some calls failed)" : "");
  std::fflush(stdout);
  return cycles / elapsed;
}

void Latency(CoordinatorProcess& p, int samples) {
  ApiClient exec(p.port(), p.token("exec"));
  ApiClient worker(p.port(), p.token("w2"));
  worker.Register("latency-worker", R"([{"workflow":"latency","version":"1","steps":[{"id":"first"}]}])");
  std::vector<double> ms;
  for (int i = 0; i < samples; ++i) {
    std::promise<Clock::time_point> returned;
    std::string lease;
    std::thread claimer([&] {
      Reply r = worker.Claim("latency-worker", 1, 20000);
      returned.set_value(Clock::now());
      if (r.status == 200 && r["leases"].IsArray() && !r["leases"].Empty()) lease = r["leases"][0]["lease_id"].GetString();
    });
    // Give the claim time to reach the coordinator and find nothing to offer.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto posted = Clock::now();
    Reply run = exec.StartRun("latency");
    auto got = returned.get_future().get();
    claimer.join();
    if (run.status != 201 || lease.empty()) {
      std::printf("  latency sample %d failed\n", i);
      continue;
    }
    ms.push_back(std::chrono::duration<double, std::milli>(got - posted).count());
    worker.Complete(lease, "latency-worker", 1);
  }
  if (ms.empty()) return;
  std::sort(ms.begin(), ms.end());
  auto pct = [&](double q) { return ms[std::min(ms.size() - 1, static_cast<size_t>(q * ms.size()))]; };
  std::printf("  POST /runs -> waiting claim returns the first step: %zu samples  p50 %.2f ms  p99 %.2f ms  max %.2f ms\n",
              ms.size(), pct(0.50), pct(0.99), ms.back());
}

// The storage's fdatasync latency in `dir` (median of 50 4-KiB writes): with
// synchronous=FULL every commit pays one, so it bounds what one worker sees.
double FsyncMs(const std::string& dir) {
  const std::string path = dir + "/fsync-probe";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return -1;
  std::vector<double> ms;
  char block[4096] = {};
  for (int i = 0; i < 50; ++i) {
    const auto t = Clock::now();
    if (::pwrite(fd, block, sizeof block, 0) != static_cast<ssize_t>(sizeof block) || ::fdatasync(fd) != 0) break;
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t).count());
  }
  ::close(fd);
  ::unlink(path.c_str());
  if (ms.empty()) return -1;
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 3;
  int samples = 200;
  std::vector<int> workers = {1, 8, 64};
  std::string binary;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i], v = argv[i + 1];
    if (a == "--seconds") seconds = std::atof(v.c_str());
    if (a == "--samples") samples = std::atoi(v.c_str());
    if (a == "--binary") binary = v;
    if (a == "--workers") {
      workers.clear();
      for (size_t pos = 0; pos < v.size();) {
        size_t comma = v.find(',', pos);
        workers.push_back(std::atoi(v.substr(pos, comma - pos).c_str()));
        pos = comma == std::string::npos ? v.size() : comma + 1;
      }
    }
  }
  CoordinatorProcess::Options o;
  o.lease_ttl_ms = 60000;
  o.heartbeat_ms = 20000;
  o.grace_ms = 60000;
  o.extra_args = {"--log-level", "warn"};
  o.binary = binary;
  CoordinatorProcess p(o);
  std::string why = p.Start();
  if (!why.empty()) {
    std::fprintf(stderr, "cannot start the coordinator: %s\n", why.c_str());
    return 1;
  }
  {
    ApiClient w(p.port(), p.token("w1"));
    w.Register("bench-setup", R"([{"workflow":"bench","version":"1","steps":)" + ManySteps() + "}]");
  }
  std::printf("scimesh-coordinator benchmark: loopback HTTP, SQLite WAL synchronous=FULL, %u hardware threads\n",
              std::thread::hardware_concurrency());
  std::printf("storage: fdatasync of 4 KiB takes %.2f ms (median of 50) where the database lives\n", FsyncMs(p.dir()));
  std::printf("claim -> started -> complete cycles (%.1f s per case):\n", seconds);
  for (int n : workers) Throughput(p, n, seconds);
  Latency(p, samples);
  return 0;
}

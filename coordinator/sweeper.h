// Sweeper: the thread that applies what the clock makes due (Ledger::Sweep)
// exactly when it falls due — lease expiry, grace windows, run deadlines,
// ended backoffs — and at least once a second. Thread-safe; owns its thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>

namespace scimesh::coordinator {

class Ledger;

class Sweeper {
 public:
  explicit Sweeper(Ledger& ledger) : ledger_(ledger) {}
  ~Sweeper() { Stop(); }
  Sweeper(const Sweeper&) = delete;
  Sweeper& operator=(const Sweeper&) = delete;

  void Start();
  // Joins the thread; idempotent.
  void Stop();
  // A change falls due at `at_ms` (ms since the epoch): sweep by then.
  void DueAt(int64_t at_ms);

 private:
  void Loop();

  Ledger& ledger_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::optional<int64_t> due_;
};

}  // namespace scimesh::coordinator

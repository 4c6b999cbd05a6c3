// Sweeper: the thread that applies what the clock makes due (Ledger::Sweep)
// exactly when it falls due — lease expiry, grace windows, run deadlines,
// ended backoffs — and at least once a second. Due times are the Ledger's
// stored wall times, read on the Ledger's own clock (Options::clock), so a
// test that drives a ManualClock drives the sweeper too. Thread-safe; owns
// its thread.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>

#include "coordinator/stoppable_thread.h"

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
  // Waits until `wake_ms`, or an earlier DueAt, falls due on the clock; false
  // once stopping.
  bool WaitUntil(int64_t wake_ms);

  Ledger& ledger_;
  std::mutex mu_;  // guards due_
  std::optional<int64_t> due_;
  StoppableThread thread_;
};

}  // namespace scimesh::coordinator

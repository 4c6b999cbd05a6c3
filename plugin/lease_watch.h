// The lease watcher: a thread in slurmstepd (on the node that hosts rank 0)
// that reads the lease state file every poll interval and, when the lease is
// lost or its deadline passes without renewal, cancels the step cluster-wide:
// SIGTERM, then SIGKILL after the grace period, each retried on failure.
//
// Ownership: a LeaseWatch owns its thread and the attempt directory's
// descriptor. Start() and Stop() are called from one thread (the SPANK hooks);
// the accessors are thread-safe. The thread blocks every signal (slurmstepd
// expects its own threads to) and never throws.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "plugin/owner_files.h"
#include "protocol/status.h"
#include "protocol/unique_fd.h"

namespace scimesh::spank {

struct WatchSpec {
  std::string lease_id;
  int64_t attempt = 0;
  int64_t lease_ttl_ms = 0;
  std::string host;  // this node's hostname
  JobOwner owner;    // the state file is read with this identity
  std::chrono::milliseconds poll{200};
  std::chrono::seconds grace{10};
  int signal_tries = 3;
  std::chrono::milliseconds signal_retry_delay{300};
};

// Sends `signal` to every task of the step on every node.
using StepSignaller = std::function<Status(int signal)>;

class LeaseWatch {
 public:
  // Starts the thread. `attempt_dir` was opened as the owner (OpenOwnedDirectory).
  static Result<std::unique_ptr<LeaseWatch>> Start(WatchSpec spec, UniqueFd attempt_dir, StepSignaller signal);
  // Stops and joins (see Stop) with a 15 s deadline.
  ~LeaseWatch();
  LeaseWatch(const LeaseWatch&) = delete;
  LeaseWatch& operator=(const LeaseWatch&) = delete;

  // Asks the thread to end and waits up to `deadline` for it. A cancellation
  // in its grace period sends SIGKILL at once instead of waiting, so tasks on
  // other nodes do not outlive the step. False when the thread did not end in
  // time (it is then detached; it only sleeps or signals, and ends soon).
  bool Stop(std::chrono::milliseconds deadline);

  // True once the watcher began cancelling the step; why() says why.
  bool cancelled() const { return cancelled_.load(); }
  std::string why() const;
  // CLOCK_MONOTONIC ms of the first SIGTERM/SIGKILL sent (0: none yet).
  int64_t cancel_sent_ms() const { return cancel_sent_ms_.load(); }

 private:
  LeaseWatch(WatchSpec spec, UniqueFd dir, StepSignaller signal);
  void Run();
  void CancelStep(const std::string& why);
  bool SendWithRetries(int signal);
  // Waits up to `d` unless stopping; true when stop was asked.
  bool WaitStop(std::chrono::milliseconds d);

  WatchSpec spec_;
  UniqueFd dir_;
  StepSignaller signal_;
  std::thread thread_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool finished_ = false;
  std::string why_;
  std::atomic<bool> cancelled_{false};
  std::atomic<int64_t> cancel_sent_ms_{0};
};

}  // namespace scimesh::spank

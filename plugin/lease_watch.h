// The lease watcher: a thread in slurmstepd (on the node that hosts rank 0)
// that reads the lease state file every poll interval and, when the lease is
// lost or its deadline passes without renewal, cancels the step cluster-wide:
// SIGTERM, then SIGKILL after the grace period, each retried on failure. A
// run cancelled by its owner (run_terminal) is not fenced: the step gets
// `owner_cancel_grace` to end on its own (its ranks see cancelled()) before
// the same SIGTERM, and SIGKILL that long after.
//
// Ownership: the thread owns everything it touches (spec, the attempt
// directory's descriptor, the signaller, its flags) through a shared state,
// so a LeaseWatch may be destroyed while its thread is still inside a
// stalled signaller call (a slow slurmctld): the thread finishes on its own,
// then frees that state. Start() and Stop() are called from one thread (the
// SPANK hooks); the accessors are thread-safe. The thread blocks every signal
// (slurmstepd expects its own threads to) and never throws.
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
#include "protocol/util/status.h"
#include "protocol/util/unique_fd.h"

namespace scimesh::spank {

struct WatchSpec {
  std::string lease_id;
  int64_t attempt = 0;
  int64_t lease_ttl_ms = 0;
  std::string host;  // this node's hostname
  JobOwner owner;    // the state file is read with this identity
  std::chrono::milliseconds poll{200};
  std::chrono::seconds grace{10};  // fencing: SIGTERM -> SIGKILL
  // Run cancelled by its owner: lease lost -> SIGTERM, and SIGTERM ->
  // SIGKILL (the launcher's --kill-grace, as it gives without the plugin).
  std::chrono::milliseconds owner_cancel_grace{10000};
  int signal_tries = 3;
  std::chrono::milliseconds signal_retry_delay{300};
};

// Sends `signal` to every task of the step on every node (slurm_kill_job_step
// in slurmstepd; a test double in tests). May block (slurmctld's timeout).
using StepSignaller = std::function<Status(int signal)>;

class LeaseWatch {
 public:
  // Starts the thread. `attempt_dir` was opened as the owner (OpenOwnedDirectory).
  static Result<std::unique_ptr<LeaseWatch>> Start(WatchSpec spec, UniqueFd attempt_dir, StepSignaller signal);
  // Stop(1 s).
  ~LeaseWatch();
  LeaseWatch(const LeaseWatch&) = delete;
  LeaseWatch& operator=(const LeaseWatch&) = delete;

  // Asks the thread to end and waits up to `deadline` for it. A cancellation
  // in its grace period after SIGTERM sends SIGKILL once at once instead of
  // waiting, so tasks on other nodes do not outlive the step; a step that
  // ends while it still has its owner-cancel grace (no signal sent yet) gets
  // none. No signal is retried once stop was asked. True when the thread ended and was joined; false when it
  // is still inside a signaller call: it is then detached, keeps its own
  // state alive, and this module is pinned in memory until the process ends.
  bool Stop(std::chrono::milliseconds deadline);

  // True once the watcher began cancelling the step (or giving it its grace
  // to end on its own); why() says why.
  bool cancelled() const;
  std::string why() const;
  // CLOCK_MONOTONIC ms of the first SIGTERM/SIGKILL sent (0: none yet).
  int64_t cancel_sent_ms() const;

  struct Shared;  // the thread's state (lease_watch.cc)

 private:
  explicit LeaseWatch(std::shared_ptr<Shared> shared);
  std::shared_ptr<Shared> shared_;
  std::thread thread_;
};

// Keeps the shared object holding this code loaded until the process exits
// (RTLD_NODELETE), so a thread left running cannot return into unmapped code
// after slurmstepd unloads the plugin. Idempotent; errors are logged.
void PinThisModule();

}  // namespace scimesh::spank

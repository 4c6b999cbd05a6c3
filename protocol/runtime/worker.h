// Worker: the serve loop (the C++ form of the seeds' Worker). Registers the
// definitions it holds, long-polls claims sized to its free slots, and runs
// each lease by the worker rules: unservable leases fail without running
// anything; inputs are downloaded and verified; `started` precedes every
// body; heartbeats run meanwhile; outputs are uploaded and confirmed before
// `complete`; errors become `fail` with their class; every 409 is handled by
// its reason.
//
// Thread-safety: Register() before Serve(), from one thread. Serve() blocks
// the calling thread and runs `concurrency` executor threads of its own.
// Stop() may be called from any thread (also from a body or a callback).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "protocol/client/client.h"
#include "protocol/runtime/step_context.h"

namespace scimesh {

// A step body. Runs on an executor thread; must return (not block forever)
// once ctx.cancelled(). Exceptions are caught and reported as fatal.
using StepBody = std::function<StepResult(StepContext& ctx)>;

// How a lease ended for this worker.
enum class LeaseEnd {
  kCompleted,   // complete accepted (or already_applied)
  kFailed,      // fail accepted (or already_applied)
  kAbandoned,   // fenced, run_terminal or expired: nothing more was written
  kUnreported,  // the final report could not be delivered (the lease will expire)
};

struct LeaseReport {
  std::string lease_id, run_id, step_id;
  int64_t attempt = 0;
  LeaseEnd end = LeaseEnd::kUnreported;
  std::optional<FailClass> fail_class;   // with kFailed
  std::optional<CancelReason> lost;      // with kAbandoned
  bool body_ran = false;
  std::string detail;  // for logs and tests
};

struct WorkerOptions {
  ClientOptions client;           // coordinator URL, token, timeouts
  std::string worker_id;          // default "<host>/<pid>"
  std::string host;               // default gethostname()
  std::string version = "libscimesh_protocol 0.1.0";
  int concurrency = 1;            // leases run at once (1-4096)
  std::string spool_dir;          // attempt directories go under it; must exist
  // Long-poll time of each claim; capped at half the coordinator's
  // lease_ttl_ms, so a lease claimed at the end of a long poll still has
  // half its TTL left by the local (send-anchored) deadline.
  int64_t wait_ms = 20000;
  std::optional<std::string> run_id;  // serve only this run; stop when it is over
  // Called on the executor thread after each lease, for observers and tests.
  std::function<void(const LeaseReport&)> on_lease_finished;
};

class Worker {
 public:
  explicit Worker(WorkerOptions options);
  ~Worker();  // Stop()s; Serve() must have returned
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Holds `definition`, with one body per step id (every step needs one).
  Status Register(WorkflowDefinition definition, std::map<std::string, StepBody> bodies);

  // Registers with the coordinator and serves until Stop() (or, with
  // options.run_id, until that run is over). Returns OK then, or the error
  // that made serving impossible (bad token, coordinator refusing to register).
  // Leases already claimed are always finished before it returns.
  Status Serve();

  // Stops claiming; Serve() returns once running leases have finished.
  void Stop();

  const std::string& worker_id() const { return options_.worker_id; }

 private:
  struct Held {
    WorkflowDefinition definition;
    std::map<std::string, StepBody> bodies;
  };
  struct Pending {
    Lease lease;
    MonoTime claim_sent_at;
  };

  Status RegisterWithCoordinator(Client& client);
  Status ClaimLoop(Client& client);
  void ExecutorMain(int index);
  // The body for a lease, or null when this worker does not hold it.
  const StepBody* FindBody(const Lease& lease) const;
  void NoteRunTerminal(const std::string& run_id);

  WorkerOptions options_;
  std::map<std::pair<std::string, std::string>, Held> held_;  // by (workflow, version)

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::deque<Pending> queue_;
  int busy_ = 0;
  std::set<std::string> terminal_runs_;
  int64_t lease_ttl_ms_ = 0;  // from the register response
  Client* claim_client_ = nullptr;  // while Serve() runs; for Stop() to interrupt
  std::vector<std::thread> executors_;
};

}  // namespace scimesh

// LeaseKeeper: what rank 0 uses to hold the step's lease while the job runs --
// heartbeats on a thread of its own, and a cheap "lost" flag for the ranks.
#pragma once

#include <memory>
#include <string>

#include "protocol/util/status.h"

namespace scimesh::mpi {

class LeaseKeeper {
 public:
  virtual ~LeaseKeeper() = default;

  // True once the lease is lost (fenced, run terminal, deadline passed).
  // Thread-safe and cheap: an atomic load.
  virtual bool lost() const = 0;

  // The progress (a JSON object) sent with the next heartbeat. Thread-safe.
  virtual void SetProgress(std::string json) = 0;

  // Stops heartbeating and hands the lease back to the launcher (lease.state
  // holder "launcher"), which sends the final report. Idempotent.
  virtual Status Release() = 0;
};

// Takes the lease in `attempt_dir` over from the launcher: reads lease.json,
// the coordinator URL and the worker's token (SCIMESH_TOKEN_FILE or
// SCIMESH_TOKEN), and starts heartbeating. Defined by the runtime's
// coordinator binding; tests substitute their own.
Result<std::unique_ptr<LeaseKeeper>> TakeOverLease(const std::string& attempt_dir);

}  // namespace scimesh::mpi

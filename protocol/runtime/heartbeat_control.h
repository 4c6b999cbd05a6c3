// HeartbeatControl: what the user of one lease sees of whatever keeps it
// alive: a HeartbeatLoop (a thread of its own) or a HeartbeatHub handle (one
// thread for many leases). Both keep the lease with the same rules (see
// heartbeat_loop.h): beats every interval, the local deadline measured from
// each beat's send, the lease state file rewritten after each beat, the token
// cancelled when the lease is lost.
//
// Thread-safety: every member is thread-safe in every implementation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "protocol/attempt/lease_state.h"
#include "protocol/client/client.h"
#include "protocol/util/cancellation.h"
#include "protocol/wire/lease_deadline.h"

namespace scimesh {

struct HeartbeatConfig {
  LeaseCall call;                // lease_id, attempt, worker_id (its deadline is ignored)
  Millis interval{10000};        // the lease's heartbeat_ms
  LeaseDeadline deadline;        // the deadline in force now (claim or started)
  // When the request that granted `deadline` was sent; the beat cadence
  // starts there. Default: when the loop (or hub handle) is built.
  std::optional<MonoTime> granted_at;
  std::string lease_expires_at;  // informational, copied to the state file
  std::string state_path;        // the lease state file; empty: none
  LeaseHolder holder = LeaseHolder::kWorker;
  // Another holder this loop hands over to: when the state file says that
  // holder holds the lease (take-over), this loop pauses (no beats, no
  // writes) instead of overwriting it, until Resume(). nullopt: never yields.
  std::optional<LeaseHolder> yields_to;
};

class HeartbeatControl {
 public:
  virtual ~HeartbeatControl() = default;  // Stop()s

  // Writes the first state (held) and starts beating. Once only.
  virtual Status Start() = 0;

  // A deadline granted by a call made elsewhere (the started response).
  virtual void Extend(const LeaseExtension& extension) = 0;

  // JSON sent as `progress` with the next beat (then forgotten).
  virtual void SetProgress(std::string progress_json) = 0;

  virtual LeaseDeadline deadline() const = 0;
  virtual int64_t beats() const = 0;  // successful heartbeats so far

  // Hands heartbeating to another holder of the same lease (rank 0 of an MPI
  // step, which writes the same state file): no beats and no state writes
  // until Resume(). Idempotent.
  virtual void Pause() = 0;

  // Takes heartbeating back and beats at once. `deadline` replaces the local
  // deadline (the other holder's, when it was measured on this host);
  // without it, one interval from now is assumed until that first beat.
  virtual void Resume(std::optional<LeaseDeadline> deadline) = 0;

  // No other process will hold this lease or watch its state file: a single
  // rank forked without scimesh-rank, outside srun (it has no key, and no
  // SPANK plugin watches it). Beats then stop rewriting the state file and
  // stop reading it for a take-over (with a thousand leases those writes
  // were most of a launcher's idle CPU); lost and done are still written.
  // Idempotent.
  virtual void HoldAlone() = 0;

  // Stops beating; idempotent. A beat in flight is interrupted. The token is
  // left as it is. Once it returns, nothing more is written for the lease
  // but by MarkDone()/MarkLost().
  virtual void Stop() = 0;

  // After the final report was accepted: state file says done. Call after
  // Stop(). A failed write is logged (the report is what counts).
  virtual void MarkDone() = 0;

  // The lease was found lost elsewhere (a refused `started`): cancel the
  // token, write state lost, beat no more.
  virtual void MarkLost(CancelReason reason) = 0;
};

}  // namespace scimesh

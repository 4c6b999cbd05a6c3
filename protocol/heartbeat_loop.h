// HeartbeatLoop: keeps one lease alive from its own thread, and says loudly
// (cancellation token + lease state file) when it is lost.
//
// Every `interval` it sends a heartbeat, keeps the new expiry as a local
// monotonic deadline (measured from when the beat was sent) and rewrites the
// lease state file atomically. It cancels the token on 409 fenced,
// run_terminal or not_started, and when the deadline passes without a
// successful beat (reason expired). A 409 already_applied means the outcome
// was recorded: the state becomes done and the token is cancelled too, since
// nothing more may be written for the lease.
//
// Independent of Worker: the MPI runtime's rank 0 runs one for the whole job.
// Thread-safety: all public members are thread-safe. The Client passed in is
// used only by the loop's thread from Start() until Stop() returns; it must
// outlive the loop and not be used by anyone else meanwhile.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "protocol/cancellation.h"
#include "protocol/client.h"
#include "protocol/lease_deadline.h"
#include "protocol/lease_state.h"

namespace scimesh {

struct HeartbeatConfig {
  LeaseCall call;                // lease_id, attempt, worker_id (its deadline is ignored)
  Millis interval{10000};        // the lease's heartbeat_ms
  LeaseDeadline deadline;        // the deadline in force now (claim or started)
  // When the request that granted `deadline` was sent; the beat cadence
  // starts there. Default: when the loop is built.
  std::optional<MonoTime> granted_at;
  std::string lease_expires_at;  // informational, copied to the state file
  std::string state_path;        // the lease state file; empty: none
  LeaseHolder holder = LeaseHolder::kWorker;
  // Another holder this loop hands over to: when the state file says that
  // holder holds the lease (take-over), this loop pauses (no beats, no
  // writes) instead of overwriting it, until Resume(). nullopt: never yields.
  std::optional<LeaseHolder> yields_to;
};

class HeartbeatLoop {
 public:
  HeartbeatLoop(Client& client, HeartbeatConfig config, std::shared_ptr<CancellationToken> token);
  ~HeartbeatLoop();  // Stop()s
  HeartbeatLoop(const HeartbeatLoop&) = delete;
  HeartbeatLoop& operator=(const HeartbeatLoop&) = delete;

  // Writes the first state (held) and starts the thread. Once only.
  Status Start();

  // A deadline granted by a call made elsewhere (the started response).
  void Extend(const LeaseExtension& extension);

  // JSON sent as `progress` with the next beat (then forgotten).
  void SetProgress(std::string progress_json);

  LeaseDeadline deadline() const;
  int64_t beats() const;  // successful heartbeats so far

  // Hands heartbeating to another holder of the same lease (rank 0 of an MPI
  // step, which writes the same state file): no beats and no state writes
  // until Resume(). Idempotent.
  void Pause();

  // Takes heartbeating back and beats at once. `deadline` replaces the local
  // deadline (the other holder's, when it was measured on this host);
  // without it, one interval from now is assumed until that first beat.
  void Resume(std::optional<LeaseDeadline> deadline);

  // Stops beating and joins the thread; idempotent. A beat in flight is
  // interrupted. The token is left as it is.
  void Stop();

  // After the final report was accepted: state file says done. Call after
  // Stop(). A failed write is logged (the report is what counts).
  void MarkDone();

  // The lease was found lost elsewhere (a refused `started`): cancel the
  // token, write state lost, beat no more.
  void MarkLost(CancelReason reason);

 private:
  void Run();
  void Beat();
  void WriteStateLocked(LeaseHold hold, std::optional<CancelReason> reason);
  // True (and paused_ set) when the state file says `yields_to` holds the
  // lease; true (finished_ set, token cancelled) when it says `yields_to`
  // lost it.
  bool YieldLocked();

  Client& client_;
  const HeartbeatConfig config_;
  const std::shared_ptr<CancellationToken> token_;
  const std::string host_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool finished_ = false;  // the lease is lost or done: no more beats
  bool paused_ = false;    // another holder beats (Pause/Resume)
  LeaseDeadline deadline_;
  std::string expires_at_;
  MonoTime last_sent_;
  std::optional<std::string> progress_;
  int64_t beats_ = 0;
  int64_t seq_ = 0;
  std::thread thread_;
};

}  // namespace scimesh

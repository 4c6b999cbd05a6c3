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

#include "protocol/runtime/heartbeat_control.h"
#include "protocol/runtime/heartbeat_state.h"

namespace scimesh {

class HeartbeatLoop final : public HeartbeatControl {
 public:
  HeartbeatLoop(Client& client, HeartbeatConfig config, std::shared_ptr<CancellationToken> token);
  ~HeartbeatLoop() override;  // Stop()s
  HeartbeatLoop(const HeartbeatLoop&) = delete;
  HeartbeatLoop& operator=(const HeartbeatLoop&) = delete;

  // Writes the first state (held) and starts the thread. Once only.
  Status Start() override;

  // A deadline granted by a call made elsewhere (the started response).
  void Extend(const LeaseExtension& extension) override;

  // JSON sent as `progress` with the next beat (then forgotten).
  void SetProgress(std::string progress_json) override;

  LeaseDeadline deadline() const override;
  int64_t beats() const override;  // successful heartbeats so far

  // Hands heartbeating to another holder of the same lease (rank 0 of an MPI
  // step, which writes the same state file): no beats and no state writes
  // until Resume(). Idempotent.
  void Pause() override;

  // Takes heartbeating back and beats at once. `deadline` replaces the local
  // deadline (the other holder's, when it was measured on this host);
  // without it, one interval from now is assumed until that first beat.
  void Resume(std::optional<LeaseDeadline> deadline) override;
  void HoldAlone() override;

  // Stops beating and joins the thread; idempotent. A beat in flight is
  // interrupted. The token is left as it is.
  void Stop() override;

  // After the final report was accepted: state file says done. Call after
  // Stop(). A failed write is logged (the report is what counts).
  void MarkDone() override;

  // The lease was found lost elsewhere (a refused `started`): cancel the
  // token, write state lost, beat no more.
  void MarkLost(CancelReason reason) override;

 private:
  void Run();
  void Beat();

  Client& client_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  HeartbeatState st_;  // guarded by mu_
  int watch_ = 0;      // st_.clock's Watch id
  std::thread thread_;
};

}  // namespace scimesh

// HeartbeatState: the rules that keep one lease, whatever drives its beats
// (HeartbeatLoop's own thread, or a HeartbeatHub's shared one): the local
// deadline, the lease state file, what each answer to a beat means, and the
// take-over by another holder (`yields_to`).
//
// Not synchronised: its owner guards it with one mutex and calls every
// member with that mutex held. The token is cancelled from here (it has no
// callbacks, so that is safe under the owner's lock).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "protocol/runtime/heartbeat_control.h"

namespace scimesh {

struct HeartbeatState {
  HeartbeatState(const Clock& clock, HeartbeatConfig config, std::shared_ptr<CancellationToken> token);

  const Clock& clock;  // of the deadline and the cadence
  const HeartbeatConfig config;
  const std::shared_ptr<CancellationToken> token;
  const std::string host;

  bool stop = false;
  bool finished = false;  // the lease is lost or done: no more beats
  bool paused = false;    // another holder beats (Pause/Resume)
  bool alone = false;     // HoldAlone: no take-over, no state file per beat
  LeaseDeadline deadline;
  std::string expires_at;
  MonoTime last_sent;
  std::optional<std::string> progress;
  int64_t beats = 0;
  int64_t seq = 0;

  // When the next beat is due (NextBeatAt of the last send).
  MonoTime NextBeat() const { return NextBeatAt(last_sent, config.interval, deadline); }
  // The next beat's call (bounded by the deadline now) and its progress,
  // which is forgotten here.
  LeaseCall TakeCall(std::optional<std::string>* progress_out);
  // Only the progress (forgotten here), for a keeper that holds the call.
  std::optional<std::string> TakeProgress() { return std::exchange(progress, std::nullopt); }

  // A deadline granted elsewhere: kept and written down unless finished.
  void Extend(const LeaseExtension& extension);
  // HeartbeatControl::Resume; false when not paused (nothing changed).
  bool Resume(std::optional<LeaseDeadline> new_deadline);
  void MarkDone();
  // Cancels the token; unless finished: finished, state lost (done for
  // already_applied and shutdown, which are no loss).
  void MarkLost(CancelReason reason);

  // The answer to a beat (after all its tries): keeps the new expiry, or
  // handles the refusal; an error only moves the cadence (the deadline decides).
  void BeatAnswered(const Result<LeaseReply<LeaseExtension>>& reply);

  // True (and paused set) when the state file says `yields_to` holds the
  // lease; true (finished set, token cancelled) when it says `yields_to`
  // lost it.
  bool Yield();

  void Write(LeaseHold hold, std::optional<CancelReason> reason);
};

}  // namespace scimesh

// The rules of keeping one lease: deadline, state file, answers, take-over.
#include "protocol/runtime/heartbeat_state.h"

#include <unistd.h>

#include "protocol/util/host_name.h"
#include "protocol/util/log.h"

namespace scimesh {
namespace {

std::shared_ptr<spdlog::logger> Log() { return log::For("heartbeat"); }

}  // namespace

HeartbeatState::HeartbeatState(const Clock& k, HeartbeatConfig c, std::shared_ptr<CancellationToken> t)
    : clock(k), config(std::move(c)), token(std::move(t)), host(HostName()), deadline(config.deadline),
      expires_at(config.lease_expires_at), last_sent(config.granted_at.value_or(clock.Now())) {}

LeaseCall HeartbeatState::TakeCall(std::optional<std::string>* progress_out) {
  LeaseCall call = config.call;
  call.deadline = deadline;
  *progress_out = TakeProgress();
  return call;
}

void HeartbeatState::Extend(const LeaseExtension& extension) {
  if (finished) return;
  deadline = extension.deadline;
  expires_at = extension.response.lease_expires_at;
  last_sent = extension.sent_at;
  Write(LeaseHold::kHeld, std::nullopt);
}

bool HeartbeatState::Resume(std::optional<LeaseDeadline> new_deadline) {
  if (!paused) return false;
  paused = false;
  const MonoTime now = clock.Now();
  deadline = new_deadline.value_or(LeaseDeadline::At(now + config.interval));
  last_sent = now - config.interval;  // beat at once
  if (!finished) Write(LeaseHold::kHeld, std::nullopt);
  return true;
}

void HeartbeatState::MarkDone() {
  finished = true;
  Write(LeaseHold::kDone, std::nullopt);
}

void HeartbeatState::MarkLost(CancelReason reason) {
  token->Cancel(reason);
  if (finished) return;
  finished = true;
  if (reason == CancelReason::kAlreadyApplied || reason == CancelReason::kShutdown) {
    // Not a loss: the outcome is recorded (or being reported by the owner).
    Write(LeaseHold::kDone, std::nullopt);
    return;
  }
  Log()->warn("lease {} attempt {} lost: {}", config.call.lease_id, config.call.attempt, CancelReasonName(reason));
  Write(LeaseHold::kLost, reason);
}

void HeartbeatState::BeatAnswered(const Result<LeaseReply<LeaseExtension>>& r) {
  if (!r.ok()) {
    // Retried inside the call until the deadline; if time is left (a refusal
    // such as 401 or 404), try again next interval and let the deadline decide.
    Log()->warn("heartbeat {} failed: {}", config.call.lease_id, r.status().ToString());
    last_sent = clock.Now();
    return;
  }
  if (r->applied) {
    deadline = r->applied->deadline;  // keep the new expiry
    expires_at = r->applied->response.lease_expires_at;
    last_sent = r->applied->sent_at;
    ++beats;
    // Paused while this beat was in flight: the state file is the other holder's now.
    if (!paused && !alone && !Yield()) Write(LeaseHold::kHeld, std::nullopt);
    return;
  }
  switch (r->refusal->reason) {
    case RefusalReason::kAlreadyApplied:
      finished = true;
      Write(LeaseHold::kDone, std::nullopt);
      token->Cancel(CancelReason::kAlreadyApplied);
      break;
    case RefusalReason::kFenced: MarkLost(CancelReason::kFenced); break;
    case RefusalReason::kRunTerminal: MarkLost(CancelReason::kRunTerminal); break;
    case RefusalReason::kNotStarted: MarkLost(CancelReason::kNotStarted); break;
  }
}

bool HeartbeatState::Yield() {
  if (alone || !config.yields_to || config.state_path.empty()) return false;
  auto state = ReadLeaseState(config.state_path);
  if (!state.ok() || state->holder != *config.yields_to) return false;
  if (state->state == LeaseHold::kLost) {
    // The holder we handed over to lost the lease: it is gone for us too.
    // Never beat (nor write held) over that word, whatever the timing.
    Log()->warn("lease {}: {} found it lost ({})", config.call.lease_id, LeaseHolderName(*config.yields_to),
                state->reason ? CancelReasonName(*state->reason) : "unknown");
    finished = true;
    token->Cancel(state->reason.value_or(CancelReason::kFenced));
    return true;
  }
  if (state->state != LeaseHold::kHeld) return false;
  if (!paused) {
    Log()->info("lease {}: {} holds it now; pausing", config.call.lease_id, LeaseHolderName(*config.yields_to));
  }
  paused = true;
  return true;
}

void HeartbeatState::Write(LeaseHold hold, std::optional<CancelReason> reason) {
  if (config.state_path.empty()) return;
  LeaseState s;
  s.lease_id = config.call.lease_id;
  s.attempt = config.call.attempt;
  s.holder = config.holder;
  s.host = host;
  s.pid = ::getpid();
  s.state = hold;
  s.reason = reason;
  s.seq = ++seq;
  s.deadline_mono_ms = MonoMillis(deadline.at());
  s.lease_expires_at = expires_at;
  if (Status st = WriteLeaseState(config.state_path, s); !st.ok()) {
    Log()->warn("lease {}: cannot write the lease state file: {}", config.call.lease_id, st.message());
  }
}

}  // namespace scimesh

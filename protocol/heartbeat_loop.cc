// The heartbeat loop: beat, keep the expiry, write the state, cancel on loss.
#include "protocol/heartbeat_loop.h"

#include <unistd.h>

#include "protocol/host_name.h"
#include "protocol/log.h"

namespace scimesh {
namespace {

std::shared_ptr<spdlog::logger> Log() { return log::For("heartbeat"); }


}  // namespace

HeartbeatLoop::HeartbeatLoop(Client& client, HeartbeatConfig config, std::shared_ptr<CancellationToken> token)
    : client_(client), config_(std::move(config)), token_(std::move(token)), host_(HostName()),
      deadline_(config_.deadline), expires_at_(config_.lease_expires_at),
      last_sent_(config_.granted_at.value_or(std::chrono::steady_clock::now())) {}

HeartbeatLoop::~HeartbeatLoop() { Stop(); }

Status HeartbeatLoop::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (thread_.joinable() || stop_) return Status::Internal("heartbeat loop started twice");
  WriteStateLocked(LeaseHold::kHeld, std::nullopt);
  try {
    thread_ = std::thread([this] { Run(); });
  } catch (const std::exception& e) {
    return Status::Internal(std::string("cannot start the heartbeat thread: ") + e.what());
  }
  return Status::Ok();
}

void HeartbeatLoop::Extend(const LeaseExtension& extension) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (finished_) return;
    deadline_ = extension.deadline;
    expires_at_ = extension.response.lease_expires_at;
    last_sent_ = extension.sent_at;
    WriteStateLocked(LeaseHold::kHeld, std::nullopt);
  }
  cv_.notify_all();
}

void HeartbeatLoop::SetProgress(std::string progress_json) {
  std::lock_guard<std::mutex> lock(mu_);
  progress_ = std::move(progress_json);
}

LeaseDeadline HeartbeatLoop::deadline() const {
  std::lock_guard<std::mutex> lock(mu_);
  return deadline_;
}

int64_t HeartbeatLoop::beats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return beats_;
}

void HeartbeatLoop::Pause() {
  std::lock_guard<std::mutex> lock(mu_);
  paused_ = true;
}

void HeartbeatLoop::Resume(std::optional<LeaseDeadline> deadline) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!paused_) return;
    paused_ = false;
    const MonoTime now = std::chrono::steady_clock::now();
    deadline_ = deadline.value_or(LeaseDeadline::At(now + config_.interval));
    last_sent_ = now - config_.interval;  // beat at once
    if (!finished_) WriteStateLocked(LeaseHold::kHeld, std::nullopt);
  }
  cv_.notify_all();
}

void HeartbeatLoop::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) {
    client_.Interrupt();  // a beat in flight ends now, not at its timeout
    thread_.join();
    client_.ClearInterrupt();
  }
}

void HeartbeatLoop::MarkDone() {
  std::lock_guard<std::mutex> lock(mu_);
  finished_ = true;
  WriteStateLocked(LeaseHold::kDone, std::nullopt);
}

void HeartbeatLoop::Run() {
  try {
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        for (;;) {
          if (stop_ || finished_) return;
          if (paused_) {
            cv_.wait(lock);
            continue;
          }
          const MonoTime next = NextBeatAt(last_sent_, config_.interval, deadline_);
          if (std::chrono::steady_clock::now() >= next) {
            if (YieldLocked()) continue;
            break;
          }
          cv_.wait_until(lock, next);
        }
      }
      if (deadline().PassedAt(std::chrono::steady_clock::now())) {
        MarkLost(CancelReason::kExpired);
        return;
      }
      Beat();
    }
  } catch (const std::exception& e) {
    // A thread entry point: nothing may escape. Without beats the lease will
    // expire; say so now rather than leave the body running blind.
    Log()->error("heartbeat {} stopped by an unexpected error: {}", config_.call.lease_id, e.what());
    MarkLost(CancelReason::kExpired);
  }
}

void HeartbeatLoop::Beat() {
  LeaseCall call = config_.call;
  std::optional<std::string> progress;
  {
    std::lock_guard<std::mutex> lock(mu_);
    call.deadline = deadline_;
    progress = std::exchange(progress_, std::nullopt);
  }
  auto r = client_.Heartbeat(call, progress);
  std::optional<CancelReason> lost;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return;
    if (!r.ok()) {
      // Retried inside the call until the deadline; if time is left (a refusal
      // such as 401 or 404), try again next interval and let the deadline decide.
      Log()->warn("heartbeat {} failed: {}", call.lease_id, r.status().ToString());
      last_sent_ = std::chrono::steady_clock::now();
      return;
    }
    if (r->applied) {
      deadline_ = r->applied->deadline;  // keep the new expiry
      expires_at_ = r->applied->response.lease_expires_at;
      last_sent_ = r->applied->sent_at;
      ++beats_;
      // Paused while this beat was in flight: the state file is the other holder's now.
      if (!paused_ && !YieldLocked()) WriteStateLocked(LeaseHold::kHeld, std::nullopt);
      return;
    }
    switch (r->refusal->reason) {
      case RefusalReason::kAlreadyApplied:
        finished_ = true;
        WriteStateLocked(LeaseHold::kDone, std::nullopt);
        lost = CancelReason::kAlreadyApplied;
        break;
      case RefusalReason::kFenced: lost = CancelReason::kFenced; break;
      case RefusalReason::kRunTerminal: lost = CancelReason::kRunTerminal; break;
      case RefusalReason::kNotStarted: lost = CancelReason::kNotStarted; break;
    }
  }
  if (lost == CancelReason::kAlreadyApplied) token_->Cancel(*lost);
  else if (lost) MarkLost(*lost);
}

void HeartbeatLoop::MarkLost(CancelReason reason) {
  token_->Cancel(reason);
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return;
  finished_ = true;
  if (reason == CancelReason::kAlreadyApplied || reason == CancelReason::kShutdown) {
    // Not a loss: the outcome is recorded (or being reported by the owner).
    WriteStateLocked(LeaseHold::kDone, std::nullopt);
    return;
  }
  Log()->warn("lease {} attempt {} lost: {}", config_.call.lease_id, config_.call.attempt, CancelReasonName(reason));
  WriteStateLocked(LeaseHold::kLost, reason);
}

bool HeartbeatLoop::YieldLocked() {
  if (!config_.yields_to || config_.state_path.empty()) return false;
  auto state = ReadLeaseState(config_.state_path);
  if (!state.ok() || state->holder != *config_.yields_to) return false;
  if (state->state == LeaseHold::kLost) {
    // The holder we handed over to lost the lease: it is gone for us too.
    // Never beat (nor write held) over that word, whatever the timing.
    Log()->warn("lease {}: {} found it lost ({})", config_.call.lease_id, LeaseHolderName(*config_.yields_to),
                state->reason ? CancelReasonName(*state->reason) : "unknown");
    finished_ = true;
    token_->Cancel(state->reason.value_or(CancelReason::kFenced));
    return true;
  }
  if (state->state != LeaseHold::kHeld) return false;
  if (!paused_) {
    Log()->info("lease {}: {} holds it now; pausing", config_.call.lease_id, LeaseHolderName(*config_.yields_to));
  }
  paused_ = true;
  return true;
}

void HeartbeatLoop::WriteStateLocked(LeaseHold hold, std::optional<CancelReason> reason) {
  if (config_.state_path.empty()) return;
  LeaseState s;
  s.lease_id = config_.call.lease_id;
  s.attempt = config_.call.attempt;
  s.holder = config_.holder;
  s.host = host_;
  s.pid = ::getpid();
  s.state = hold;
  s.reason = reason;
  s.seq = ++seq_;
  s.deadline_mono_ms = MonoMillis(deadline_.at());
  s.lease_expires_at = expires_at_;
  if (Status st = WriteLeaseState(config_.state_path, s); !st.ok()) {
    Log()->warn("lease {}: cannot write the lease state file: {}", config_.call.lease_id, st.message());
  }
}

}  // namespace scimesh

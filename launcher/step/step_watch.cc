// What stops a running step, decided on the event loop.
#include "launcher/step/step_watch.h"

#include <signal.h>
#include <unistd.h>

#include "protocol/attempt/lease_state.h"
#include "protocol/util/log.h"

namespace scimesh::launcher {

StepWatch::StepWatch(EventLoop& loop, WatchParams params, Signal signal, Done done)
    : loop_(loop), p_(std::move(params)), signal_(std::move(signal)), done_(std::move(done)) {}

StepWatch::~StepWatch() {
  Disarm(walltime_timer_);
  Disarm(poll_timer_);
  Disarm(silence_timer_);
  Disarm(stop_timer_);
}

void StepWatch::Disarm(uint64_t& timer) {
  if (timer != 0) loop_.Cancel(timer);
  timer = 0;
}

void StepWatch::Begin() {
  walltime_timer_ = loop_.At(p_.walltime_end, [this] {
    walltime_timer_ = 0;
    StopFor(StopCause::kWalltime);
  });
  OnStateChanged();
  SchedulePoll();
}

void StepWatch::SchedulePoll() {
  if (!p_.state_poll || ended_) return;
  poll_timer_ = loop_.After(*p_.state_poll, [this] {
    poll_timer_ = 0;
    OnStateChanged();
    SchedulePoll();
  });
}

void StepWatch::OnStateChanged() {
  if (ended_) return;
  // The safe reader: a FIFO or symlink planted as lease.state is refused at
  // once, so the loop (walltime, lease loss) never stalls on it.
  auto state = ReadLeaseStateAt(p_.dir_fd, ::geteuid());
  if (!state.ok() || state->holder != LeaseHolder::kRank0) return;
  const bool changed = state->seq != last_seq_;
  last_seq_ = state->seq;
  if (!rank0_holds_ && HeldBy(*state, LeaseHolder::kRank0)) {
    rank0_holds_ = true;
    p_.ctx->PauseHeartbeats();  // one heartbeat stream per step: rank 0's
    log::For("launcher")->info("lease {}: rank 0 holds the lease now", p_.ctx->lease().lease_id);
  }
  if (state->state == LeaseHold::kLost) {
    // The lease is gone: the lease's report must not be sent.
    p_.ctx->LeaseLostElsewhere(state->reason.value_or(CancelReason::kFenced));
    StopFor(StopCause::kLeaseLost);
    return;
  }
  // Rank 0 hung or died without a word: its beats stop. Each new write
  // restarts the count.
  if (state->state == LeaseHold::kHeld && (changed || silence_timer_ == 0)) ArmSilence();
}

void StepWatch::ArmSilence() {
  Disarm(silence_timer_);
  silence_timer_ = loop_.After(p_.silence_limit, [this] {
    silence_timer_ = 0;
    StopFor(StopCause::kRankZeroSilent);
  });
}

void StepWatch::StopFor(StopCause cause) {
  if (ended_ || cause_ != StopCause::kNone) return;
  cause_ = cause;
  Disarm(walltime_timer_);
  Disarm(poll_timer_);
  Disarm(silence_timer_);
  if (cause == StopCause::kLeaseLost) {
    // A lost lease reaches the ranks through their own lease watch too: give
    // them the grace to stop on their own before SIGTERM, then SIGKILL.
    stop_timer_ = loop_.After(p_.kill_grace, [this] {
      stop_timer_ = 0;
      Terminate();
    });
    return;
  }
  Terminate();
}

void StepWatch::Terminate() {
  if (ended_) return;
  signal_(SIGTERM);
  stop_timer_ = loop_.After(p_.kill_grace, [this] {
    stop_timer_ = 0;
    if (!ended_) signal_(SIGKILL);
  });
}

void StepWatch::OnExit(const ExitInfo& exit) {
  if (ended_) return;
  // What rank 0 wrote last may not have been seen before the exit.
  OnStateChanged();
  ended_ = true;
  Disarm(walltime_timer_);
  Disarm(poll_timer_);
  Disarm(silence_timer_);
  Disarm(stop_timer_);
  done_(WatchEnd{cause_, exit, rank0_holds_});  // may destroy this watch
}

}  // namespace scimesh::launcher

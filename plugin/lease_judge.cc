// The watcher's decision on each read of the lease state file.
#include "plugin/lease_judge.h"

#include "protocol/util/cancellation.h"
#include "protocol/util/clock.h"

namespace scimesh::spank {

LeaseJudge::LeaseJudge(std::string lease_id, int64_t attempt, std::string host, int64_t lease_ttl_ms,
                       int64_t start_ms)
    : lease_id_(std::move(lease_id)),
      attempt_(attempt),
      host_(std::move(host)),
      ttl_ms_(lease_ttl_ms),
      last_progress_ms_(start_ms) {}

Judgement LeaseJudge::Unreadable(const std::string& cause, int64_t now_ms) const {
  // A missing or torn file is not proof of loss; a whole TTL without a
  // readable state is: nobody can be holding the lease for us.
  if (now_ms - last_progress_ms_ > ttl_ms_) {
    return {Judgement::Action::kCancel,
            "no valid lease state for " + std::to_string(now_ms - last_progress_ms_) + " ms (" + cause + ")"};
  }
  return {};
}

Judgement LeaseJudge::Observe(const Result<LeaseState>& read, int64_t now_ms) {
  if (!read.ok()) return Unreadable(read.status().message(), now_ms);
  const LeaseState& s = read.value();
  if (s.lease_id != lease_id_ || s.attempt != attempt_) {
    return Unreadable("the state file names lease " + s.lease_id + " attempt " + std::to_string(s.attempt), now_ms);
  }
  if (s.seq != last_seq_) {
    last_seq_ = s.seq;
    last_progress_ms_ = now_ms;
  }
  switch (s.state) {
    case LeaseHold::kLost: {
      // Only a run its owner cancelled can have no other attempt: every
      // other loss (or one without a reason) is fenced off at once.
      const bool owner_cancelled = s.reason == CancelReason::kRunTerminal;
      return {owner_cancelled ? Judgement::Action::kEndWithinGrace : Judgement::Action::kCancel,
              "lease lost (" + std::string(s.reason ? CancelReasonName(*s.reason) : "unknown") + ", reported by " +
                  std::string(LeaseHolderName(s.holder)) + ")"};
    }
    case LeaseHold::kDone:
      return {Judgement::Action::kStopWatching, "the lease's final report was accepted"};
    case LeaseHold::kHeld:
      break;
  }
  // The deadline is a CLOCK_MONOTONIC reading: it means something only on
  // the host that measured it; elsewhere the judge watches for progress.
  if (const auto deadline = DeadlineOnHost(s, host_)) {
    const int64_t late_ms = now_ms - MonoMillis(deadline->at());
    if (late_ms > 0) {
      return {Judgement::Action::kCancel, "lease deadline passed " + std::to_string(late_ms) +
                                              " ms ago without renewal (holder " + std::string(LeaseHolderName(s.holder)) + ")"};
    }
    return {};
  }
  if (now_ms - last_progress_ms_ > ttl_ms_) {
    return {Judgement::Action::kCancel, "lease state not renewed for " + std::to_string(now_ms - last_progress_ms_) +
                                            " ms (holder " + std::string(LeaseHolderName(s.holder)) + " on another host)"};
  }
  return {};
}

}  // namespace scimesh::spank

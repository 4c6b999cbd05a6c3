// Pure lease decisions: the refusal order, the clock, failures and expiry.
#include "coordinator/lease_rules.h"

#include <algorithm>
#include <cmath>

#include "protocol/util/enum_names.h"

namespace scimesh::coordinator {
namespace {

constexpr EnumNames<LeaseCall, 5> kCalls{{
    {LeaseCall::kStarted, "started"},
    {LeaseCall::kHeartbeat, "heartbeat"},
    {LeaseCall::kComplete, "complete"},
    {LeaseCall::kFail, "fail"},
    {LeaseCall::kArtifact, "artifact"},
}};

constexpr EnumNames<Verdict, 6> kVerdicts{{
    {Verdict::kApply, "apply"},
    {Verdict::kForbidden, "forbidden"},
    {Verdict::kFenced, "fenced"},
    {Verdict::kAlreadyApplied, "already_applied"},
    {Verdict::kRunTerminal, "run_terminal"},
    {Verdict::kNotStarted, "not_started"},
}};

}  // namespace

std::string_view Name(LeaseCall call) { return NameOf(kCalls, call); }
std::string_view Name(Verdict v) { return NameOf(kVerdicts, v); }

Verdict DecideLeaseCall(const LeaseFacts& lease, const LeaseCaller& caller, LeaseCall call) {
  // 2. claimed with another key, and the caller is not admin.
  // A lease token stands for the key that claimed the lease (it was issued
  // for exactly this lease and attempt).
  const bool by_token = caller.lease_token_attempt > 0 && caller.lease_token_attempt == lease.attempt;
  if (!caller.admin && !by_token && caller.key_name != lease.key_name) return Verdict::kForbidden;
  // 3. not the owner.
  if (caller.worker_id != lease.worker_id || caller.attempt != lease.attempt) return Verdict::kFenced;
  // 4. an outcome was already recorded (every lease call counts).
  if (lease.state == AttemptState::kCompleted || lease.state == AttemptState::kFailed) {
    return Verdict::kAlreadyApplied;
  }
  // 5. the run is over.
  if (lease.run_terminal) return Verdict::kRunTerminal;
  // 6. the attempt lost the step.
  if (lease.state == AttemptState::kExpired || lease.state == AttemptState::kCancelled || lease.superseded) {
    return Verdict::kFenced;
  }
  // 7. at_most_once: an outcome for a body that never started.
  AttemptState live = lease.state == AttemptState::kOrphaned ? lease.state_before_orphan : lease.state;
  if (lease.delivery == Delivery::kAtMostOnce && live == AttemptState::kLeased &&
      (call == LeaseCall::kComplete || call == LeaseCall::kFail)) {
    return Verdict::kNotStarted;
  }
  return Verdict::kApply;
}

ClockEffect ClockEffectAt(AttemptState state, int64_t expires_at_ms, int64_t grace_ms, int64_t now_ms) {
  const bool past_expiry = now_ms >= expires_at_ms;
  const bool past_grace = now_ms >= expires_at_ms + grace_ms;
  if (state == AttemptState::kLeased || state == AttemptState::kRunning) {
    if (!past_expiry) return ClockEffect::kNone;
    return past_grace ? ClockEffect::kOrphanAndExpire : ClockEffect::kOrphan;
  }
  if (state == AttemptState::kOrphaned && past_grace) return ClockEffect::kExpire;
  return ClockEffect::kNone;
}

int64_t BackoffMs(const RetryPolicy& policy, int64_t spent, double jitter) {
  // Doubling stops at the cap; the exponent is bounded so it cannot overflow.
  double delay = static_cast<double>(policy.base_ms) * std::pow(2.0, static_cast<double>(std::clamp<int64_t>(spent - 1, 0, 40)));
  delay = std::min(delay, static_cast<double>(policy.cap_ms));
  delay *= 1.0 + 0.2 * std::clamp(jitter, -1.0, 1.0);
  return std::max<int64_t>(0, std::llround(delay));
}

FailureVerdict DecideFailure(FailClass c, const StepDefinition& step, int64_t spent_before,
                             const RetryPolicy& policy, double jitter) {
  FailureVerdict v;
  switch (c) {
    case FailClass::kFatal:
      return v;
    case FailClass::kUnservable:
      v.requeue = true;
      v.exclude_worker = true;
      return v;
    case FailClass::kPreempted:
      v.requeue = true;
      return v;
    case FailClass::kStorageFull:
      // No budget spent, but not at once: the store needs room first.
      v.requeue = true;
      v.delay_ms = BackoffMs(policy, 64, jitter);  // the cap
      return v;
    default:
      break;
  }
  v.spends_budget = true;
  const int64_t spent = spent_before + 1;
  if (step.RetriesOn(c) && spent < step.max_attempts) {
    v.requeue = true;
    v.delay_ms = BackoffMs(policy, spent, jitter);
  }
  return v;
}

FailureVerdict DecideExpiry(const StepDefinition& step, bool body_started, int64_t spent_before,
                            const RetryPolicy& policy, double jitter) {
  FailureVerdict v;
  // A lease that never got `started` never ran a body, whatever the delivery:
  // nothing was at risk, so it is offered again at once, for free.
  if (!body_started) {
    v.requeue = true;
    return v;
  }
  if (step.delivery == Delivery::kAtMostOnce) return v;
  v.spends_budget = true;
  const int64_t spent = spent_before + 1;
  if (spent < step.max_attempts) {
    v.requeue = true;
    v.delay_ms = BackoffMs(policy, spent, jitter);
  }
  return v;
}

}  // namespace scimesh::coordinator

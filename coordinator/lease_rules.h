// The lease rules as pure decisions (docs/protocol.md "Refusals", "Attempt",
// "fail", "Delivery"): which verdict a lease call gets, what the clock does to
// an attempt, and what a failure or an expiry does to its step. The Ledger
// applies these inside one transaction; here they are testable alone.
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "coordinator/definition.h"
#include "coordinator/states.h"

namespace scimesh::coordinator {

enum class LeaseCall { kStarted, kHeartbeat, kComplete, kFail, kArtifact };
std::string_view Name(LeaseCall call);

// What the coordinator knows about an existing lease when a call arrives,
// after the clock has been applied (see ClockEffectAt).
struct LeaseFacts {
  std::string key_name;  // the key that claimed it
  std::string worker_id;
  int64_t attempt = 0;
  AttemptState state = AttemptState::kLeased;
  AttemptState state_before_orphan = AttemptState::kLeased;  // when state is orphaned
  bool run_terminal = false;
  bool superseded = false;  // the step has a newer attempt
  Delivery delivery = Delivery::kAtLeastOnce;
};

// Who calls, and what they claim to hold.
struct LeaseCaller {
  std::string key_name;  // empty when the caller holds the lease's token instead
  bool admin = false;
  std::string worker_id;
  int64_t attempt = 0;
  int64_t lease_token_attempt = 0;  // >0: authenticated by the lease token of this attempt
};

// The outcome of the checks, in the order of docs/protocol.md "Refusals"
// (404 for an unknown lease is decided before facts exist).
enum class Verdict { kApply, kForbidden, kFenced, kAlreadyApplied, kRunTerminal, kNotStarted };
std::string_view Name(Verdict v);

Verdict DecideLeaseCall(const LeaseFacts& lease, const LeaseCaller& caller, LeaseCall call);

// What the clock does to an attempt stored in `state` whose lease expires at
// `expires_at_ms`: a live attempt past its expiry is orphaned; an orphaned one
// past expiry + grace is expired (both steps at once when both are due).
enum class ClockEffect { kNone, kOrphan, kExpire, kOrphanAndExpire };
ClockEffect ClockEffectAt(AttemptState state, int64_t expires_at_ms, int64_t grace_ms, int64_t now_ms);

struct RetryPolicy {
  int64_t base_ms = 1000;
  int64_t cap_ms = 60000;
};

// min(base * 2^(spent-1), cap), scaled by (1 + 0.2 * jitter); jitter in [-1, 1].
int64_t BackoffMs(const RetryPolicy& policy, int64_t spent, double jitter);

// What happens to a step when an attempt ends without success.
struct FailureVerdict {
  bool spends_budget = false;
  bool requeue = false;         // otherwise the step fails for good
  bool exclude_worker = false;  // unservable: not offered to this worker again until it re-registers
  int64_t delay_ms = 0;         // backoff before the requeued step is offered
};

// A `fail` with class `c`, after `spent_before` budget-spending attempts.
FailureVerdict DecideFailure(FailClass c, const StepDefinition& step, int64_t spent_before,
                             const RetryPolicy& policy, double jitter);

// A lease that expired past its grace window. One that never got `started`
// (either delivery) never ran a body: requeued at once without spending.
// Once started, at_most_once: the body is never run again (the step fails);
// at_least_once: spends the budget (the body may have taken its worker down
// with it) and requeues with backoff while attempts remain.
FailureVerdict DecideExpiry(const StepDefinition& step, bool body_started, int64_t spent_before,
                            const RetryPolicy& policy, double jitter);

}  // namespace scimesh::coordinator

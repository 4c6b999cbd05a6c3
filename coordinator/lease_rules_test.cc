// Tests of the pure lease rules: refusal order, clock, failures, expiry.
#include "coordinator/lease_rules.h"

#include <gtest/gtest.h>

namespace scimesh::coordinator {
namespace {

LeaseFacts Live(AttemptState s = AttemptState::kRunning) {
  LeaseFacts f;
  f.key_name = "k1";
  f.worker_id = "w1";
  f.attempt = 2;
  f.state = s;
  return f;
}

LeaseCaller Owner() { return LeaseCaller{"k1", false, "w1", 2}; }

TEST(DecideLeaseCall, OwnerOnALiveAttemptApplies) {
  for (auto call : {LeaseCall::kStarted, LeaseCall::kHeartbeat, LeaseCall::kComplete, LeaseCall::kFail,
                    LeaseCall::kArtifact}) {
    EXPECT_EQ(DecideLeaseCall(Live(), Owner(), call), Verdict::kApply) << Name(call);
  }
}

TEST(DecideLeaseCall, AnotherKeyIsForbiddenUnlessAdmin) {
  LeaseCaller other = Owner();
  other.key_name = "k2";
  EXPECT_EQ(DecideLeaseCall(Live(), other, LeaseCall::kHeartbeat), Verdict::kForbidden);
  other.admin = true;
  EXPECT_EQ(DecideLeaseCall(Live(), other, LeaseCall::kHeartbeat), Verdict::kApply);
}

TEST(DecideLeaseCall, WrongWorkerOrAttemptIsFenced) {
  LeaseCaller c = Owner();
  c.worker_id = "w2";
  EXPECT_EQ(DecideLeaseCall(Live(), c, LeaseCall::kHeartbeat), Verdict::kFenced);
  c = Owner();
  c.attempt = 1;
  EXPECT_EQ(DecideLeaseCall(Live(), c, LeaseCall::kComplete), Verdict::kFenced);
}

TEST(DecideLeaseCall, ChecksRunInTheDocumentedOrder) {
  // 2 before 3: another key and another worker -> 403.
  LeaseCaller c = Owner();
  c.key_name = "k2";
  c.worker_id = "w2";
  EXPECT_EQ(DecideLeaseCall(Live(), c, LeaseCall::kComplete), Verdict::kForbidden);
  // 3 before 4: a completed lease and another attempt number -> fenced.
  c = Owner();
  c.attempt = 3;
  EXPECT_EQ(DecideLeaseCall(Live(AttemptState::kCompleted), c, LeaseCall::kComplete), Verdict::kFenced);
  // 4 before 5: completed, and the run is now terminal -> already_applied.
  LeaseFacts f = Live(AttemptState::kCompleted);
  f.run_terminal = true;
  EXPECT_EQ(DecideLeaseCall(f, Owner(), LeaseCall::kComplete), Verdict::kAlreadyApplied);
  // 5 before 6: cancelled attempt of a terminal run -> run_terminal.
  f = Live(AttemptState::kCancelled);
  f.run_terminal = true;
  EXPECT_EQ(DecideLeaseCall(f, Owner(), LeaseCall::kHeartbeat), Verdict::kRunTerminal);
  // 5 before 7: at_most_once never started in a terminal run -> run_terminal.
  f = Live(AttemptState::kLeased);
  f.delivery = Delivery::kAtMostOnce;
  f.run_terminal = true;
  EXPECT_EQ(DecideLeaseCall(f, Owner(), LeaseCall::kComplete), Verdict::kRunTerminal);
}

TEST(DecideLeaseCall, RecordedOutcomeAnswersAlreadyAppliedToEveryCall) {
  for (auto s : {AttemptState::kCompleted, AttemptState::kFailed}) {
    for (auto call : {LeaseCall::kStarted, LeaseCall::kHeartbeat, LeaseCall::kComplete, LeaseCall::kFail,
                      LeaseCall::kArtifact}) {
      EXPECT_EQ(DecideLeaseCall(Live(s), Owner(), call), Verdict::kAlreadyApplied);
    }
  }
}

TEST(DecideLeaseCall, ExpiredCancelledOrSupersededIsFenced) {
  EXPECT_EQ(DecideLeaseCall(Live(AttemptState::kExpired), Owner(), LeaseCall::kHeartbeat), Verdict::kFenced);
  EXPECT_EQ(DecideLeaseCall(Live(AttemptState::kCancelled), Owner(), LeaseCall::kHeartbeat), Verdict::kFenced);
  LeaseFacts f = Live();
  f.superseded = true;
  EXPECT_EQ(DecideLeaseCall(f, Owner(), LeaseCall::kComplete), Verdict::kFenced);
}

TEST(DecideLeaseCall, AtMostOnceOutcomeBeforeStartedIsNotStarted) {
  LeaseFacts f = Live(AttemptState::kLeased);
  f.delivery = Delivery::kAtMostOnce;
  EXPECT_EQ(DecideLeaseCall(f, Owner(), LeaseCall::kComplete), Verdict::kNotStarted);
  EXPECT_EQ(DecideLeaseCall(f, Owner(), LeaseCall::kFail), Verdict::kNotStarted);
  EXPECT_EQ(DecideLeaseCall(f, Owner(), LeaseCall::kHeartbeat), Verdict::kApply);
  EXPECT_EQ(DecideLeaseCall(f, Owner(), LeaseCall::kStarted), Verdict::kApply);
  // An orphaned attempt is judged by the state it had before.
  f.state = AttemptState::kOrphaned;
  f.state_before_orphan = AttemptState::kLeased;
  EXPECT_EQ(DecideLeaseCall(f, Owner(), LeaseCall::kComplete), Verdict::kNotStarted);
  f.state_before_orphan = AttemptState::kRunning;
  EXPECT_EQ(DecideLeaseCall(f, Owner(), LeaseCall::kComplete), Verdict::kApply);
  // at_least_once may complete from leased.
  LeaseFacts g = Live(AttemptState::kLeased);
  EXPECT_EQ(DecideLeaseCall(g, Owner(), LeaseCall::kComplete), Verdict::kApply);
}

TEST(ClockEffectAt, OrphansThenExpires) {
  EXPECT_EQ(ClockEffectAt(AttemptState::kRunning, 1000, 300, 999), ClockEffect::kNone);
  EXPECT_EQ(ClockEffectAt(AttemptState::kRunning, 1000, 300, 1000), ClockEffect::kOrphan);
  EXPECT_EQ(ClockEffectAt(AttemptState::kLeased, 1000, 300, 1299), ClockEffect::kOrphan);
  EXPECT_EQ(ClockEffectAt(AttemptState::kLeased, 1000, 300, 1300), ClockEffect::kOrphanAndExpire);
  EXPECT_EQ(ClockEffectAt(AttemptState::kOrphaned, 1000, 300, 1299), ClockEffect::kNone);
  EXPECT_EQ(ClockEffectAt(AttemptState::kOrphaned, 1000, 300, 1300), ClockEffect::kExpire);
  EXPECT_EQ(ClockEffectAt(AttemptState::kCompleted, 1000, 300, 5000), ClockEffect::kNone);
}

TEST(BackoffMs, DoublesUpToTheCapWithTwentyPercentJitter) {
  RetryPolicy p{1000, 60000};
  EXPECT_EQ(BackoffMs(p, 1, 0.0), 1000);
  EXPECT_EQ(BackoffMs(p, 2, 0.0), 2000);
  EXPECT_EQ(BackoffMs(p, 3, 0.0), 4000);
  EXPECT_EQ(BackoffMs(p, 10, 0.0), 60000);
  EXPECT_EQ(BackoffMs(p, 1000, 0.0), 60000);
  EXPECT_EQ(BackoffMs(p, 1, 1.0), 1200);
  EXPECT_EQ(BackoffMs(p, 1, -1.0), 800);
}

TEST(DecideFailure, ClassesAndBudget) {
  StepDefinition s;
  s.max_attempts = 3;
  s.retry_on = {FailClass::kRetryable};
  RetryPolicy p{100, 1000};

  FailureVerdict v = DecideFailure(FailClass::kRetryable, s, 0, p, 0.0);
  EXPECT_TRUE(v.spends_budget);
  EXPECT_TRUE(v.requeue);
  EXPECT_EQ(v.delay_ms, 100);
  v = DecideFailure(FailClass::kRetryable, s, 1, p, 0.0);
  EXPECT_TRUE(v.requeue);
  EXPECT_EQ(v.delay_ms, 200);
  v = DecideFailure(FailClass::kRetryable, s, 2, p, 0.0);  // the third spent attempt
  EXPECT_TRUE(v.spends_budget);
  EXPECT_FALSE(v.requeue);

  v = DecideFailure(FailClass::kTimeout, s, 0, p, 0.0);  // not in retry_on
  EXPECT_TRUE(v.spends_budget);
  EXPECT_FALSE(v.requeue);
  v = DecideFailure(FailClass::kFatal, s, 0, p, 0.0);
  EXPECT_FALSE(v.spends_budget);
  EXPECT_FALSE(v.requeue);

  for (int spent : {0, 2, 99}) {
    v = DecideFailure(FailClass::kUnservable, s, spent, p, 0.0);
    EXPECT_TRUE(v.requeue);
    EXPECT_TRUE(v.exclude_worker);
    EXPECT_FALSE(v.spends_budget);
    EXPECT_EQ(v.delay_ms, 0);
    v = DecideFailure(FailClass::kPreempted, s, spent, p, 0.0);
    EXPECT_TRUE(v.requeue);
    EXPECT_FALSE(v.exclude_worker);
    EXPECT_FALSE(v.spends_budget);
    // A full artifact store: free, but not at once (the backoff's cap).
    v = DecideFailure(FailClass::kStorageFull, s, spent, p, 0.0);
    EXPECT_TRUE(v.requeue);
    EXPECT_FALSE(v.exclude_worker);
    EXPECT_FALSE(v.spends_budget);
    EXPECT_EQ(v.delay_ms, p.cap_ms);
  }
}

TEST(DecideExpiry, DeliveryDecides) {
  StepDefinition s;
  s.max_attempts = 2;
  RetryPolicy p{50, 1000};
  FailureVerdict v = DecideExpiry(s, true, 0, p, 0.0);
  EXPECT_TRUE(v.spends_budget);
  EXPECT_TRUE(v.requeue);
  EXPECT_EQ(v.delay_ms, 50);
  v = DecideExpiry(s, true, 1, p, 0.0);
  EXPECT_FALSE(v.requeue);

  s.delivery = Delivery::kAtMostOnce;
  v = DecideExpiry(s, true, 0, p, 0.0);
  EXPECT_FALSE(v.requeue);
  v = DecideExpiry(s, false, 1, p, 0.0);  // never started: requeued without spending
  EXPECT_TRUE(v.requeue);
  EXPECT_FALSE(v.spends_budget);
}

TEST(DecideExpiry, NeverStartedIsFreeUnderEitherDelivery) {
  RetryPolicy p{50, 1000};
  for (Delivery d : {Delivery::kAtLeastOnce, Delivery::kAtMostOnce}) {
    StepDefinition s;
    s.delivery = d;
    s.max_attempts = 1;
    // Even with the whole budget already spent: no body ran, nothing to spend.
    for (int64_t spent : {0, 1, 5}) {
      FailureVerdict v = DecideExpiry(s, false, spent, p, 1.0);
      EXPECT_TRUE(v.requeue) << Name(d) << " spent=" << spent;
      EXPECT_FALSE(v.spends_budget) << Name(d) << " spent=" << spent;
      EXPECT_EQ(v.delay_ms, 0) << Name(d) << " spent=" << spent;  // at once, no backoff
      EXPECT_FALSE(v.exclude_worker);
    }
  }
}

TEST(DecideExpiry, StartedAtLeastOnceSpendsEvenTheLastAttempt) {
  StepDefinition s;
  s.max_attempts = 1;
  FailureVerdict v = DecideExpiry(s, true, 0, RetryPolicy{50, 1000}, 0.0);
  EXPECT_TRUE(v.spends_budget);
  EXPECT_FALSE(v.requeue);
}

}  // namespace
}  // namespace scimesh::coordinator

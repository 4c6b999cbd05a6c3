// Integration: the clock — lease expiry (orphaned), revival within the grace
// window, expiry after it (requeue for at_least_once, failure for a started
// at_most_once attempt), and the fence on the old lease afterwards.
// TTL 600 ms, grace 300 ms: each expiry takes about a second.
#include "coordinator_fixture.h"

namespace scimesh::coordinator::testing {
namespace {

using Expiry = CoordinatorTest;

TEST_F(Expiry, SilentLeaseIsOrphanedThenExpiredAndRequeued) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep(R"("max_attempts":3)")));
  std::string run = StartRunOrEmpty("wf");
  LeaseRef first = ClaimOne(*w1_, "worker-1");
  ASSERT_EQ(w1_->Started(first.lease_id, "worker-1", 1).status, 200);
  // No heartbeat: a claim held meanwhile returns once the step is requeued.
  LeaseRef second = ClaimOne(*w2_, "worker-1", 10000);
  ASSERT_EQ(second.step_id, "s");
  EXPECT_EQ(second.attempt, 2);
  EXPECT_NE(second.lease_id, first.lease_id);
  EXPECT_EQ(AttemptStatus(run, "s", 1), "expired");
  std::vector<std::string> events = Events(run);
  std::vector<std::string> want = {"run_started",
                                   "attempt_leased s#1@worker-1",
                                   "attempt_started s#1@worker-1",
                                   "attempt_orphaned s#1@worker-1",
                                   "attempt_expired s#1@worker-1",
                                   "step_requeued s#1@worker-1",
                                   "attempt_leased s#2@worker-1"};
  EXPECT_EQ(events, want);

  // The old lease is fenced for good; its owner learns so on any call.
  Reply late = w1_->Heartbeat(first.lease_id, "worker-1", 1);
  EXPECT_EQ(late.status, 409);
  EXPECT_EQ(late.Str("reason"), "fenced");
  EXPECT_EQ(w1_->Complete(first.lease_id, "worker-1", 1).Str("reason"), "fenced");
  EXPECT_EQ(w2_->Complete(second.lease_id, "worker-1", 2).status, 200);
  EXPECT_EQ(RunStatus(run), "completed");
}

TEST_F(Expiry, HeartbeatWithinTheGraceWindowRevivesTheAttempt) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep()));
  std::string run = StartRunOrEmpty("wf");
  LeaseRef l = ClaimOne(*w1_, "worker-1");
  ASSERT_EQ(w1_->Started(l.lease_id, "worker-1", 1).status, 200);
  ASSERT_TRUE(Await([&] { return AttemptStatus(run, "s", 1); }, "orphaned"));
  Reply beat = w1_->Heartbeat(l.lease_id, "worker-1", 1);
  // The grace window (300 ms) may have ended between the two calls on a
  // loaded machine; then the lease is fenced, which is also correct.
  if (beat.status == 409) {
    EXPECT_EQ(beat.Str("reason"), "fenced");
    GTEST_SKIP() << "the grace window ended before the heartbeat arrived";
  }
  ASSERT_EQ(beat.status, 200) << beat.Describe();
  EXPECT_EQ(AttemptStatus(run, "s", 1), "running");  // back to its previous state
  EXPECT_EQ(CountEvents(run, "attempt_revived"), 1);
  EXPECT_EQ(w1_->Complete(l.lease_id, "worker-1", 1).status, 200);
  EXPECT_EQ(CountEvents(run, "attempt_expired"), 0);
}

TEST_F(Expiry, KeepingTheHeartbeatKeepsTheLease) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep()));
  std::string run = StartRunOrEmpty("wf");
  LeaseRef l = ClaimOne(*w1_, "worker-1");
  ASSERT_EQ(w1_->Started(l.lease_id, "worker-1", 1).status, 200);
  // Beat every heartbeat_ms (200) for three TTLs; meanwhile nobody else gets it.
  for (int i = 0; i < 9; ++i) {
    Reply beat = w1_->Heartbeat(l.lease_id, "worker-1", 1);
    ASSERT_EQ(beat.status, 200) << beat.Describe();
    EXPECT_TRUE(Leases(w2_->Claim("worker-1", 1, 200)).empty());
  }
  EXPECT_EQ(CountEvents(run, "attempt_orphaned"), 0);
  EXPECT_EQ(w1_->Complete(l.lease_id, "worker-1", 1).status, 200);
}

TEST_F(Expiry, StartedAtMostOnceAttemptThatExpiresFailsTheStep) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep(R"("delivery":"at_most_once","max_attempts":5)")));
  std::string run = StartRunOrEmpty("wf");
  LeaseRef l = ClaimOne(*w1_, "worker-1");
  ASSERT_EQ(w1_->Started(l.lease_id, "worker-1", 1).status, 200);
  ASSERT_TRUE(Await([&] { return RunStatus(run); }, "failed"));
  EXPECT_EQ(StepStatus(run, "s"), "failed");
  EXPECT_EQ(AttemptStatus(run, "s", 1), "expired");
  EXPECT_EQ(CountEvents(run, "step_requeued"), 0);
  EXPECT_EQ(CountEvents(run, "step_failed"), 1);
  Reply late = w1_->Complete(l.lease_id, "worker-1", 1);
  EXPECT_EQ(late.status, 409);
  EXPECT_EQ(late.Str("reason"), "run_terminal");
}

TEST_F(Expiry, AtMostOnceAttemptThatNeverStartedIsRequeued) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep(R"("delivery":"at_most_once","max_attempts":1)")));
  std::string run = StartRunOrEmpty("wf");
  LeaseRef first = ClaimOne(*w1_, "worker-1");
  // Never started: the body never ran, so it is offered again (without
  // spending the single attempt of the budget).
  LeaseRef second = ClaimOne(*w1_, "worker-1", 10000);
  EXPECT_EQ(second.attempt, 2);
  ASSERT_EQ(w1_->Started(second.lease_id, "worker-1", 2).status, 200);
  EXPECT_EQ(w1_->Complete(second.lease_id, "worker-1", 2).status, 200);
  EXPECT_EQ(RunStatus(run), "completed");
  EXPECT_EQ(AttemptStatus(run, "s", 1), "expired");
}

TEST_F(Expiry, RepeatedExpiryOfAnAtLeastOnceStepSpendsTheBudget) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep(R"("max_attempts":2)")));
  std::string run = StartRunOrEmpty("wf");
  LeaseRef first = ClaimOne(*w1_, "worker-1");
  LeaseRef second = ClaimOne(*w1_, "worker-1", 10000);  // after the first expired
  ASSERT_EQ(second.attempt, 2);
  ASSERT_TRUE(Await([&] { return RunStatus(run); }, "failed"));
  EXPECT_EQ(AttemptStatus(run, "s", 2), "expired");
  EXPECT_EQ(StepStatus(run, "s"), "failed");
}

}  // namespace
}  // namespace scimesh::coordinator::testing

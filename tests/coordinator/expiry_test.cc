// Integration: the clock — lease expiry (orphaned), revival within the grace
// window, expiry after it (requeue for at_least_once, failure for a started
// at_most_once attempt; free requeue for one that never started, either
// delivery), and the fence on the old lease afterwards.
// TTL 600 ms, grace 300 ms: each expiry takes about a second.
#include "coordinator_fixture.h"

namespace scimesh::coordinator::testing {
namespace {

class Expiry : public CoordinatorTest {
 protected:
  // `detail.reason` of every step_requeued event, in order.
  std::vector<std::string> RequeueReasons(const std::string& run_id) {
    Reply j = exec_->Journal(run_id);
    std::vector<std::string> out;
    if (!j["events"].IsArray()) return out;
    for (const auto& e : j["events"].GetArray()) {
      if (std::string(e["type"].GetString()) != "step_requeued") continue;
      out.push_back(e["detail"].HasMember("reason") ? e["detail"]["reason"].GetString() : "");
    }
    return out;
  }

  // The error class of one attempt in `run show`, or "" when it has none.
  std::string AttemptErrorClass(const std::string& run_id, const std::string& step_id, int64_t attempt) {
    Reply show = exec_->ShowRun(run_id);
    const rapidjson::Value* s = FindStep(show, step_id);
    if (s == nullptr) return "";
    for (const auto& a : (*s)["attempts"].GetArray()) {
      if (a["attempt"].GetInt64() == attempt && a["error"].IsObject()) return a["error"]["class"].GetString();
    }
    return "";
  }
};

TEST_F(Expiry, SilentLeaseIsOrphanedThenExpiredAndRequeued) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep(R"("max_attempts":3)")));
  std::string run = StartRunOrEmpty("wf");
  LeaseRef first = ClaimOne(*w1_, "worker-1");
  ASSERT_EQ(w1_->Started(first.lease_id, "worker-1", 1).status, 200);
  // No heartbeat: a claim held meanwhile returns once the step is requeued.
  LeaseRef second = ClaimOne(*w1_, "worker-1", 10000);
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
  EXPECT_EQ(w1_->Complete(second.lease_id, "worker-1", 2).status, 200);
  EXPECT_EQ(RunStatus(run), "completed");
}

// A grace window no loaded machine outlasts between two calls: the revival
// below cannot be mistaken for a fence (the exact boundaries are tested on a
// ManualClock in coordinator/ledger_clock_test.cc).
class ExpiryLongGrace : public Expiry {
 protected:
  CoordinatorProcess::Options ProcessOptions() override {
    CoordinatorProcess::Options o;
    o.grace_ms = 120000;
    return o;
  }
};

TEST_F(ExpiryLongGrace, HeartbeatWithinTheGraceWindowRevivesTheAttempt) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep()));
  std::string run = StartRunOrEmpty("wf");
  LeaseRef l = ClaimOne(*w1_, "worker-1");
  ASSERT_EQ(w1_->Started(l.lease_id, "worker-1", 1).status, 200);
  ASSERT_TRUE(Await([&] { return AttemptStatus(run, "s", 1); }, "orphaned"));
  Reply beat = w1_->Heartbeat(l.lease_id, "worker-1", 1);
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
    EXPECT_TRUE(Leases(w1_->Claim("worker-1", 1, 200)).empty());
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

TEST_F(Expiry, AtLeastOnceAttemptThatNeverStartedIsRequeuedWithoutSpending) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep(R"("max_attempts":1)")));
  RegisterOrDie(*w2_, "worker-2", Definitions("wf", OneStep(R"("max_attempts":1)")));
  std::string run = StartRunOrEmpty("wf");
  // The claim's holder is gone (a launcher stopped during its long poll):
  // the lease is never started and expires.
  LeaseRef first = ClaimOne(*w1_, "worker-1");
  ASSERT_EQ(first.attempt, 1);
  // The single attempt of the budget is still there: a held claim gets attempt 2.
  LeaseRef second = ClaimOne(*w2_, "worker-2", 10000);
  ASSERT_EQ(second.step_id, "s");
  EXPECT_EQ(second.attempt, 2);
  EXPECT_EQ(AttemptStatus(run, "s", 1), "expired");
  EXPECT_EQ(AttemptErrorClass(run, "s", 1), "lease_expired");
  std::vector<std::string> want = {"run_started",
                                   "attempt_leased s#1@worker-1",
                                   "attempt_orphaned s#1@worker-1",
                                   "attempt_expired s#1@worker-1",
                                   "step_requeued s#1@worker-1",
                                   "attempt_leased s#2@worker-2"};
  EXPECT_EQ(Events(run), want);
  EXPECT_EQ(RequeueReasons(run), std::vector<std::string>{"lease_expired"});

  // The expired lease cannot start late: its body must not run beside attempt 2.
  EXPECT_EQ(w1_->Started(first.lease_id, "worker-1", 1).Str("reason"), "fenced");
  ASSERT_EQ(w2_->Started(second.lease_id, "worker-2", 2).status, 200);
  EXPECT_EQ(w2_->Complete(second.lease_id, "worker-2", 2).status, 200);
  EXPECT_EQ(RunStatus(run), "completed");
}

TEST_F(Expiry, StartedAtLeastOnceAttemptThatExpiresSpendsTheLastAttempt) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep(R"("max_attempts":1)")));
  std::string run = StartRunOrEmpty("wf");
  LeaseRef l = ClaimOne(*w1_, "worker-1");
  ASSERT_EQ(w1_->Started(l.lease_id, "worker-1", 1).status, 200);
  ASSERT_TRUE(Await([&] { return RunStatus(run); }, "failed"));
  EXPECT_EQ(StepStatus(run, "s"), "failed");
  EXPECT_EQ(AttemptStatus(run, "s", 1), "expired");
  EXPECT_EQ(AttemptErrorClass(run, "s", 1), "lease_expired");
  EXPECT_EQ(CountEvents(run, "step_requeued"), 0);
  Reply j = exec_->Journal(run);
  std::string failed_class;
  for (const auto& e : j["events"].GetArray()) {
    if (std::string(e["type"].GetString()) == "step_failed") failed_class = e["detail"]["class"].GetString();
  }
  EXPECT_EQ(failed_class, "lease_expired");
}

TEST_F(Expiry, OnlyStartedExpiriesOfAnAtLeastOnceStepSpendTheBudget) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep(R"("max_attempts":2)")));
  std::string run = StartRunOrEmpty("wf");
  LeaseRef first = ClaimOne(*w1_, "worker-1");  // started, expires: spends 1 of 2
  ASSERT_EQ(w1_->Started(first.lease_id, "worker-1", 1).status, 200);
  LeaseRef second = ClaimOne(*w1_, "worker-1", 10000);  // never started, expires: free
  ASSERT_EQ(second.attempt, 2);
  LeaseRef third = ClaimOne(*w1_, "worker-1", 10000);  // started, expires: spends 2 of 2
  ASSERT_EQ(third.attempt, 3);
  ASSERT_EQ(w1_->Started(third.lease_id, "worker-1", 3).status, 200);
  ASSERT_TRUE(Await([&] { return RunStatus(run); }, "failed"));
  EXPECT_EQ(StepStatus(run, "s"), "failed");
  for (int64_t a : {1, 2, 3}) {
    EXPECT_EQ(AttemptStatus(run, "s", a), "expired") << "attempt " << a;
    EXPECT_EQ(AttemptErrorClass(run, "s", a), "lease_expired") << "attempt " << a;
  }
  EXPECT_EQ(RequeueReasons(run), (std::vector<std::string>{"lease_expired", "lease_expired"}));
  EXPECT_EQ(CountEvents(run, "step_failed"), 1);
}

// Unstarted expiries are free and unbounded by max_attempts; what bounds them
// is the run: its deadline (or a cancel) ends the loop, and every round is in
// the journal.
TEST_F(Expiry, UnstartedExpiriesLoopOnlyUntilTheRunDeadline) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep(R"("max_attempts":1)")));
  std::string run = StartRunOrEmpty("wf", "{}", R"(,"deadline_s":3)");
  int64_t last_attempt = 0;
  for (int i = 0; i < 20; ++i) {
    auto leases = Leases(w1_->Claim("worker-1", 1, 2000));
    if (leases.empty()) break;  // nothing offerable any more: the run is over
    EXPECT_EQ(leases[0].attempt, last_attempt + 1);
    last_attempt = leases[0].attempt;
  }
  ASSERT_TRUE(Await([&] { return RunStatus(run); }, "timed_out"));
  EXPECT_GE(last_attempt, 2);  // at least one free requeue despite max_attempts 1
  EXPECT_EQ(CountEvents(run, "step_failed"), 0);
  // Every attempt but the last expired and was requeued; the last one was
  // cancelled by the deadline, unless it expired just before it.
  const int expired = CountEvents(run, "attempt_expired");
  EXPECT_GE(expired, last_attempt - 1);
  EXPECT_LE(expired, last_attempt);
  EXPECT_EQ(RequeueReasons(run), std::vector<std::string>(static_cast<size_t>(expired), "lease_expired"));
  EXPECT_EQ(StepStatus(run, "s"), "cancelled");
}

}  // namespace
}  // namespace scimesh::coordinator::testing

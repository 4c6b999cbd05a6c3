// Integration: `fail` by class — retry budget and backoff, classes outside
// retry_on, fatal, unservable (excluded until re-register) and preempted
// (neither spends the budget), and a template that cannot render.
#include "coordinator_fixture.h"

namespace scimesh::coordinator::testing {
namespace {

using Failures = CoordinatorTest;

TEST_F(Failures, RetryableFailuresRequeueWithBackoffUntilTheBudgetIsSpent) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep(R"("max_attempts":2)")));
  std::string run = StartRunOrEmpty("wf");
  LeaseRef first = ClaimOne(*w1_, "worker-1");
  ASSERT_EQ(w1_->Started(first.lease_id, "worker-1", 1).status, 200);
  Reply f1 = w1_->Fail(first.lease_id, "worker-1", 1, "retryable", "solver exited with status 3");
  ASSERT_EQ(f1.status, 200) << f1.Describe();
  EXPECT_EQ(f1.Str("outcome"), "failed");
  EXPECT_TRUE(f1["requeued"].IsTrue());
  EXPECT_TRUE(f1["next_attempt_not_before"].IsString());

  LeaseRef second = ClaimOne(*w1_, "worker-1", 5000);  // after the backoff (base 50 ms)
  ASSERT_EQ(second.attempt, 2);
  ASSERT_EQ(w1_->Started(second.lease_id, "worker-1", 2).status, 200);
  Reply f2 = w1_->Fail(second.lease_id, "worker-1", 2, "retryable", "again");
  ASSERT_EQ(f2.status, 200);
  EXPECT_TRUE(f2["requeued"].IsFalse());
  EXPECT_FALSE(f2["next_attempt_not_before"].IsString());

  EXPECT_EQ(StepStatus(run, "s"), "failed");
  EXPECT_EQ(RunStatus(run), "failed");
  EXPECT_EQ(CountEvents(run, "step_failed"), 1);
  EXPECT_EQ(CountEvents(run, "run_failed"), 1);
  Reply show = exec_->ShowRun(run);
  const rapidjson::Value& attempt2 = (*FindStep(show, "s"))["attempts"][1];
  EXPECT_STREQ(attempt2["error"]["class"].GetString(), "retryable");
  EXPECT_STREQ(attempt2["error"]["message"].GetString(), "again");
}

TEST_F(Failures, AClassOutsideRetryOnFailsAtOnce) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep(R"("max_attempts":5)")));
  std::string run = StartRunOrEmpty("wf");
  LeaseRef l = ClaimOne(*w1_, "worker-1");
  Reply f = w1_->Fail(l.lease_id, "worker-1", 1, "invalid_output", "no output.json");
  ASSERT_EQ(f.status, 200);
  EXPECT_TRUE(f["requeued"].IsFalse());
  EXPECT_EQ(RunStatus(run), "failed");
}

TEST_F(Failures, FatalFailsTheStepAndTheRunAndCancelsTheRest) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", R"([{"id":"a"},{"id":"b"},{"id":"c","needs":["a"]}])"));
  std::string run = StartRunOrEmpty("wf");
  auto leases = Leases(w1_->Claim("worker-1", 2, 0));
  ASSERT_EQ(leases.size(), 2u);
  ASSERT_EQ(w1_->Fail(leases[0].lease_id, "worker-1", 1, "fatal", "bad input").status, 200);
  EXPECT_EQ(RunStatus(run), "failed");
  EXPECT_EQ(StepStatus(run, "a"), "failed");
  EXPECT_EQ(StepStatus(run, "b"), "cancelled");
  EXPECT_EQ(StepStatus(run, "c"), "cancelled");
  EXPECT_EQ(AttemptStatus(run, "b", 1), "cancelled");
  EXPECT_EQ(w1_->Heartbeat(leases[1].lease_id, "worker-1", 1).Str("reason"), "run_terminal");
}

TEST_F(Failures, UnservableDoesNotSpendTheBudgetAndSkipsThatWorkerUntilItRegistersAgain) {
  const std::string defs = Definitions("wf", OneStep(R"("max_attempts":1)"));
  RegisterOrDie(*w1_, "worker-1", defs);
  RegisterOrDie(*w2_, "worker-2", defs);
  std::string run = StartRunOrEmpty("wf");
  LeaseRef l = ClaimOne(*w1_, "worker-1");
  Reply f = w1_->Fail(l.lease_id, "worker-1", 1, "unservable", "no such solver here");
  ASSERT_EQ(f.status, 200);
  EXPECT_TRUE(f["requeued"].IsTrue());
  EXPECT_EQ(StepStatus(run, "s"), "queued");
  // Not offered again to worker-1 ...
  EXPECT_TRUE(Leases(w1_->Claim("worker-1", 1, 300)).empty());
  // ... until it registers again.
  RegisterOrDie(*w1_, "worker-1", defs);
  LeaseRef again = ClaimOne(*w1_, "worker-1");
  EXPECT_EQ(again.attempt, 2);
  ASSERT_EQ(w1_->Fail(again.lease_id, "worker-1", 2, "unservable").status, 200);
  // Another worker takes it; with max_attempts 1 the budget is still whole.
  LeaseRef other = ClaimOne(*w2_, "worker-2");
  EXPECT_EQ(other.attempt, 3);
  ASSERT_EQ(w2_->Complete(other.lease_id, "worker-2", 3).status, 200);
  EXPECT_EQ(RunStatus(run), "completed");
}

TEST_F(Failures, PreemptedRequeuesAtOnceWithoutSpendingTheBudget) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep(R"("max_attempts":1)")));
  std::string run = StartRunOrEmpty("wf");
  for (int attempt = 1; attempt <= 3; ++attempt) {
    LeaseRef l = ClaimOne(*w1_, "worker-1");
    ASSERT_EQ(l.attempt, attempt);
    ASSERT_EQ(w1_->Started(l.lease_id, "worker-1", attempt).status, 200);
    Reply f = w1_->Fail(l.lease_id, "worker-1", attempt, "preempted", "allocation ending");
    ASSERT_EQ(f.status, 200);
    EXPECT_TRUE(f["requeued"].IsTrue());
  }
  // The budget (1) is untouched: the fourth attempt may still fail retryably
  // once and end the step, or complete.
  LeaseRef l = ClaimOne(*w1_, "worker-1");
  EXPECT_EQ(w1_->Complete(l.lease_id, "worker-1", 4).status, 200);
  EXPECT_EQ(RunStatus(run), "completed");
  EXPECT_EQ(CountEvents(run, "step_requeued"), 3);
}

TEST_F(Failures, UnresolvableTemplateFailsTheStepAsFatal) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep(R"("input":{"n":"{{input.missing}}"})")));
  Reply created = exec_->StartRun("wf", R"({"n":1})");
  ASSERT_EQ(created.status, 201);
  std::string run = created.Str("run_id");
  EXPECT_EQ(created.Str("status"), "failed");
  Reply j = exec_->Journal(run);
  bool found = false;
  for (const auto& e : j["events"].GetArray()) {
    if (std::string(e["type"].GetString()) == "step_failed") {
      found = true;
      EXPECT_STREQ(e["detail"]["class"].GetString(), "fatal");
      EXPECT_STREQ(e["detail"]["message"].GetString(), "input template: 'input.missing' not found");
    }
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace scimesh::coordinator::testing

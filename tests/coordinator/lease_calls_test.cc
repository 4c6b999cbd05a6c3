// Integration: the lease calls on the real binary — every allowed attempt
// transition, each of the four 409 reasons, and replay idempotency.
#include "coordinator_fixture.h"

namespace scimesh::coordinator::testing {
namespace {

using LeaseCalls = CoordinatorTest;

constexpr char kTwoSteps[] = R"([
  {"id":"solve","input":{"n":"{{input.n}}","label":"mesh {{input.n}}^3"}},
  {"id":"report","needs":["solve"],"input":{"solves":["{{steps.solve.output}}"],"it":"{{steps.solve.output.iterations}}"}}
])";

TEST_F(LeaseCalls, HappyPathRunsTwoStepsInOrderWithRenderedInputs) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", kTwoSteps));
  std::string run = StartRunOrEmpty("wf", R"({"n":16})", R"(,"correlation":{"ticket":"T-1"})");
  ASSERT_FALSE(run.empty());

  LeaseRef solve = ClaimOne(*w1_, "worker-1");
  ASSERT_EQ(solve.step_id, "solve");
  EXPECT_EQ(solve.attempt, 1);
  const rapidjson::Value& lease = solve.value();
  EXPECT_EQ(lease["input"]["n"].GetInt(), 16);  // a whole placeholder keeps its type
  EXPECT_STREQ(lease["input"]["label"].GetString(), "mesh 16^3");
  EXPECT_STREQ(lease["correlation"]["ticket"].GetString(), "T-1");
  EXPECT_EQ(std::string(lease["idempotency_key"].GetString()), run + "/solve");
  EXPECT_EQ(std::string(lease["trace_id"].GetString()).size(), 32u);
  EXPECT_EQ(std::string(lease["span_id"].GetString()).size(), 16u);
  EXPECT_EQ(lease["lease_ttl_ms"].GetInt(), 600);
  EXPECT_EQ(lease["heartbeat_ms"].GetInt(), 200);
  // report waits for solve: nothing else is offered.
  EXPECT_TRUE(Leases(w1_->Claim("worker-1", 5, 0)).empty());

  Reply started = w1_->Started(solve.lease_id, "worker-1", 1);
  ASSERT_EQ(started.status, 200) << started.Describe();
  EXPECT_EQ(started["lease_ttl_ms"].GetInt(), 600);
  EXPECT_TRUE(started["lease_expires_at"].IsString());
  EXPECT_EQ(AttemptStatus(run, "solve", 1), "running");
  Reply beat = w1_->Heartbeat(solve.lease_id, "worker-1", 1);
  ASSERT_EQ(beat.status, 200) << beat.Describe();
  Reply done = w1_->Complete(solve.lease_id, "worker-1", 1, R"({"iterations":41})",
                             R"(,"state_patch":{"phase":"fine"},"usage":{"wall_s":1.5})");
  ASSERT_EQ(done.status, 200) << done.Describe();
  EXPECT_EQ(done.Str("outcome"), "completed");

  LeaseRef report = ClaimOne(*w1_, "worker-1");
  ASSERT_EQ(report.step_id, "report");
  const rapidjson::Value& r = report.value();
  EXPECT_EQ(r["input"]["solves"][0]["iterations"].GetInt(), 41);
  EXPECT_EQ(r["input"]["it"].GetInt(), 41);
  EXPECT_EQ(r["previous"]["solve"]["iterations"].GetInt(), 41);
  EXPECT_STREQ(r["run_state"]["phase"].GetString(), "fine");
  ASSERT_EQ(w1_->Complete(report.lease_id, "worker-1", 1).status, 200);

  EXPECT_EQ(RunStatus(run), "completed");
  EXPECT_EQ(Events(run), (std::vector<std::string>{
                             "run_started",
                             "attempt_leased solve#1@worker-1",
                             "attempt_started solve#1@worker-1",
                             "attempt_completed solve#1@worker-1",
                             "step_runnable report",
                             "attempt_leased report#1@worker-1",
                             "attempt_completed report#1@worker-1",
                             "run_completed",
                         }));
}

TEST_F(LeaseCalls, ReplaysCreateNothingNew) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep()));
  std::string run = StartRunOrEmpty("wf");
  LeaseRef l = ClaimOne(*w1_, "worker-1");
  ASSERT_EQ(w1_->Started(l.lease_id, "worker-1", 1).status, 200);
  ASSERT_EQ(w1_->Started(l.lease_id, "worker-1", 1).status, 200);  // replay: 200, extends
  ASSERT_EQ(w1_->Heartbeat(l.lease_id, "worker-1", 1).status, 200);
  ASSERT_EQ(w1_->Complete(l.lease_id, "worker-1", 1, R"({"v":1})").status, 200);

  // The same complete again (its response was "lost"): already_applied.
  Reply again = w1_->Complete(l.lease_id, "worker-1", 1, R"({"v":2})");
  EXPECT_EQ(again.status, 409);
  EXPECT_EQ(again.Str("error"), "conflict");
  EXPECT_EQ(again.Str("reason"), "already_applied");
  EXPECT_EQ(again.Str("outcome"), "completed");
  // A fail after the complete, and calls on the finished lease: the same answer.
  Reply fail = w1_->Fail(l.lease_id, "worker-1", 1, "retryable");
  EXPECT_EQ(fail.Str("reason"), "already_applied");
  EXPECT_EQ(fail.Str("outcome"), "completed");
  EXPECT_EQ(w1_->Heartbeat(l.lease_id, "worker-1", 1).Str("reason"), "already_applied");
  EXPECT_EQ(w1_->Started(l.lease_id, "worker-1", 1).Str("reason"), "already_applied");

  EXPECT_EQ(CountEvents(run, "attempt_started"), 1);
  EXPECT_EQ(CountEvents(run, "attempt_completed"), 1);
  EXPECT_EQ(CountEvents(run, "attempt_failed"), 0);
  Reply show = exec_->ShowRun(run);
  EXPECT_EQ((*FindStep(show, "s"))["output"]["v"].GetInt(), 1);  // the first outcome stands
}

TEST_F(LeaseCalls, FailThenCompleteAnswersAlreadyAppliedFailed) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep(R"("max_attempts":1)")));
  std::string run = StartRunOrEmpty("wf");
  LeaseRef l = ClaimOne(*w1_, "worker-1");
  ASSERT_EQ(w1_->Started(l.lease_id, "worker-1", 1).status, 200);
  ASSERT_EQ(w1_->Fail(l.lease_id, "worker-1", 1, "fatal", "solver diverged").status, 200);
  Reply again = w1_->Complete(l.lease_id, "worker-1", 1);
  EXPECT_EQ(again.status, 409);
  EXPECT_EQ(again.Str("reason"), "already_applied");
  EXPECT_EQ(again.Str("outcome"), "failed");
  EXPECT_EQ(CountEvents(run, "attempt_failed"), 1);
}

TEST_F(LeaseCalls, WrongWorkerOrAttemptIsFenced) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep()));
  StartRunOrEmpty("wf");
  LeaseRef l = ClaimOne(*w1_, "worker-1");
  Reply other_worker = w1_->Heartbeat(l.lease_id, "worker-2", 1);
  EXPECT_EQ(other_worker.status, 409);
  EXPECT_EQ(other_worker.Str("reason"), "fenced");
  Reply other_attempt = w1_->Complete(l.lease_id, "worker-1", 2);
  EXPECT_EQ(other_attempt.status, 409);
  EXPECT_EQ(other_attempt.Str("reason"), "fenced");
  EXPECT_EQ(w1_->Complete(l.lease_id, "worker-1", 1).status, 200);  // the owner still can
}

TEST_F(LeaseCalls, CancelledRunAnswersRunTerminalAndCancelsTheAttempt) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep()));
  std::string run = StartRunOrEmpty("wf");
  LeaseRef l = ClaimOne(*w1_, "worker-1");
  ASSERT_EQ(w1_->Started(l.lease_id, "worker-1", 1).status, 200);
  Reply cancel = exec_->CancelRun(run);
  ASSERT_EQ(cancel.status, 200);
  EXPECT_EQ(cancel.Str("status"), "cancelled");
  for (const Reply& r : {w1_->Heartbeat(l.lease_id, "worker-1", 1), w1_->Complete(l.lease_id, "worker-1", 1)}) {
    EXPECT_EQ(r.status, 409);
    EXPECT_EQ(r.Str("reason"), "run_terminal");
  }
  EXPECT_EQ(AttemptStatus(run, "s", 1), "cancelled");
  EXPECT_EQ(StepStatus(run, "s"), "cancelled");
  // Cancelling a terminal run answers 200 with its status, unchanged.
  Reply again = exec_->CancelRun(run);
  EXPECT_EQ(again.status, 200);
  EXPECT_EQ(again.Str("status"), "cancelled");
  EXPECT_EQ(CountEvents(run, "run_cancelled"), 1);
}

TEST_F(LeaseCalls, AtMostOnceOutcomeWithoutStartedIsNotStarted) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep(R"("delivery":"at_most_once")")));
  std::string run = StartRunOrEmpty("wf");
  LeaseRef l = ClaimOne(*w1_, "worker-1");
  for (const Reply& r : {w1_->Complete(l.lease_id, "worker-1", 1), w1_->Fail(l.lease_id, "worker-1", 1, "retryable")}) {
    EXPECT_EQ(r.status, 409) << r.Describe();
    EXPECT_EQ(r.Str("reason"), "not_started");
  }
  EXPECT_EQ(AttemptStatus(run, "s", 1), "leased");  // nothing was recorded
  ASSERT_EQ(w1_->Started(l.lease_id, "worker-1", 1).status, 200);
  EXPECT_EQ(w1_->Complete(l.lease_id, "worker-1", 1).status, 200);
}

TEST_F(LeaseCalls, AtLeastOnceMayCompleteWithoutStarted) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep()));
  std::string run = StartRunOrEmpty("wf");
  LeaseRef l = ClaimOne(*w1_, "worker-1");
  ASSERT_EQ(w1_->Heartbeat(l.lease_id, "worker-1", 1).status, 200);  // leased: heartbeat allowed
  EXPECT_EQ(w1_->Complete(l.lease_id, "worker-1", 1).status, 200);
  EXPECT_EQ(RunStatus(run), "completed");
}

TEST_F(LeaseCalls, UnknownLeaseIs404) {
  Reply r = w1_->Heartbeat("l_0000000000000000", "worker-1", 1);
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.Str("error"), "not_found");
  EXPECT_EQ(w1_->Complete("not-a-lease", "worker-1", 1).status, 404);
}

}  // namespace
}  // namespace scimesh::coordinator::testing

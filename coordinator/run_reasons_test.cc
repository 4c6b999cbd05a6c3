// Why a run and its steps ended, on a real Ledger with a ManualClock: an input
// template that does not render, a step whose need failed, an attempt's
// failure, a cancel and a deadline each give the run a reason and each step
// that did not complete an error.
#include "coordinator/run_reasons.h"

#include <gtest/gtest.h>

#include "coordinator/ledger.h"
#include "coordinator/requests.h"
#include "coordinator/test_ledger.h"

namespace scimesh::coordinator {
namespace {

class RunReasonsTest : public ManualClockLedgerTest {
 protected:
  void SetUp() override { OpenLedger(Ledger::Options{}); }

  // Worker "n1" on host "node-7" registers workflow `wf` with `steps_json`.
  void Register(const std::string& wf, const std::string& steps_json) {
    auto req = ReadRegisterRequest(R"({"worker_id":"n1","host":"node-7","version":"1","concurrency":4,
        "definitions":[{"workflow":")" + wf + R"(","version":"1","steps":)" + steps_json + "}]}");
    ASSERT_TRUE(req.ok()) << req.error().message;
    ASSERT_TRUE(ledger_->Register(req.value(), worker_).ok());
  }
  std::string StartRun(const std::string& wf, const std::string& input, const std::string& members = "") {
    auto req = ReadRunCreateRequest(R"({"workflow":")" + wf + R"(","input":)" + input + members + "}");
    EXPECT_TRUE(req.ok());
    auto run = ledger_->CreateRun(req.value(), exec_);
    EXPECT_TRUE(run.ok());
    return run.ok() ? run.value().run_id : "";
  }
  Lease ClaimOne() {
    ClaimRequest req;
    req.worker_id = "n1";
    auto reply = ledger_->Claim(req, worker_);
    EXPECT_TRUE(reply.ok() && reply.value().leases.size() == 1);
    return reply.ok() && !reply.value().leases.empty() ? reply.value().leases[0] : Lease{};
  }
  RunView Show(const std::string& run) {
    auto view = ledger_->ShowRun(run, exec_);
    EXPECT_TRUE(view.ok());
    return view.ok() ? view.value() : RunView{};
  }
  static std::string ErrorOf(const RunView& v, const std::string& step) {
    for (const StepView& s : v.steps) {
      if (s.step_id == step) return s.error_json;
    }
    return "no step " + step;
  }
};

TEST_F(RunReasonsTest, AnInputTemplateThatDoesNotRenderNamesItsPathAndTheStepsItStopped) {
  Register("wf", R"([{"id":"a","input":{"n":"{{input.n}}"}},{"id":"b","needs":["a"]},
      {"id":"c","needs":["b"]},{"id":"d"}])");
  RunView v = Show(StartRun("wf", R"({"m":5})"));
  EXPECT_EQ(v.status, "failed");
  EXPECT_EQ(v.reason, "step a failed: fatal: input template: 'input.n' not found");
  EXPECT_EQ(ErrorOf(v, "a"), R"({"class":"fatal","message":"input template: 'input.n' not found"})");
  EXPECT_EQ(ErrorOf(v, "b"), R"({"class":"cancelled","message":"never ran: it needs step a, which failed"})");
  EXPECT_EQ(ErrorOf(v, "c"), R"({"class":"cancelled","message":"never ran: it needs step a, which failed"})")
      << "a need's need";
  EXPECT_EQ(ErrorOf(v, "d"), R"j({"class":"cancelled","message":"never ran: the run failed (step a failed)"})j");
}

TEST_F(RunReasonsTest, AnAttemptsFailureIsTheStepsErrorAndTheAttemptNamesItsHost) {
  Register("wf", R"([{"id":"s"}])");
  const std::string run = StartRun("wf", "{}");
  RunView running = Show(run);
  EXPECT_EQ(running.reason, std::nullopt);
  EXPECT_EQ(ErrorOf(running, "s"), "null");
  Lease l = ClaimOne();
  ASSERT_TRUE(ledger_->Fail(l.lease_id, LeaseCaller{"w", false, "n1", 1},
                            FailRequest{"n1", 1, FailClass::kFatal, "rank 0 exited 3"}).ok());
  RunView v = Show(run);
  EXPECT_EQ(v.reason, "step s failed: fatal: rank 0 exited 3");
  EXPECT_EQ(ErrorOf(v, "s"), R"({"class":"fatal","message":"rank 0 exited 3"})");
  ASSERT_EQ(v.steps[0].attempts.size(), 1u);
  EXPECT_EQ(v.steps[0].attempts[0].host, "node-7");
}

TEST_F(RunReasonsTest, ACancelledRunSaysSoAndWhichStepsItStoppedOrNeverRan) {
  Register("wf", R"([{"id":"first"},{"id":"then","needs":["first"]}])");
  const std::string run = StartRun("wf", "{}");
  ClaimOne();
  ASSERT_TRUE(ledger_->CancelRun(run, exec_).ok());
  RunView v = Show(run);
  EXPECT_EQ(v.reason, "cancelled through the run API");
  EXPECT_EQ(ErrorOf(v, "first"), R"({"class":"cancelled","message":"stopped: the run was cancelled"})");
  EXPECT_EQ(ErrorOf(v, "then"), R"({"class":"cancelled","message":"never ran: the run was cancelled"})");
}

TEST_F(RunReasonsTest, ARunPastItsDeadlineNamesIt) {
  Register("wf", R"([{"id":"s"}])");
  const std::string run = StartRun("wf", "{}", R"(,"deadline_s":5)");
  clock_->Advance(6000);
  ASSERT_TRUE(ledger_->Sweep().ok());
  RunView v = Show(run);
  EXPECT_EQ(v.status, "timed_out");
  EXPECT_EQ(v.reason, "its deadline passed (" + v.deadline_at.value_or("") + ")");
  EXPECT_EQ(ErrorOf(v, "s"), R"({"class":"cancelled","message":"never ran: the run timed out"})");
}

}  // namespace
}  // namespace scimesh::coordinator

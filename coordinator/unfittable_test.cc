// Unfittable steps on a real Ledger with a ManualClock: a queued step that no
// live worker's largest offer fits is marked with the reason; a step that
// fits, a worker of unknown size, or no live worker leaves it unmarked.
#include "coordinator/unfittable.h"

#include <gtest/gtest.h>

#include "coordinator/ledger.h"
#include "coordinator/test_ledger.h"

namespace scimesh::coordinator {
namespace {

class UnfittableTest : public ManualClockLedgerTest {
 protected:
  void SetUp() override {
    Ledger::Options o;
    o.lease_ttl_ms = 600000;
    OpenLedger(o);
  }

  // Worker `id` registers workflow "wf": step "small" (1 node) and "big" (3 nodes).
  void Register(const std::string& id) {
    auto req = ReadRegisterRequest(R"({"worker_id":")" + id + R"(","host":"h","version":"1","concurrency":4,
        "definitions":[{"workflow":"wf","version":"1","steps":[
          {"id":"small","walltime_s":60},
          {"id":"big","resources":{"nodes":3},"walltime_s":60}]}]})");
    ASSERT_TRUE(req.ok()) << req.error().message;
    ASSERT_TRUE(ledger_->Register(req.value(), worker_).ok());
  }
  std::optional<UnfittableView> UnfittableOf(const std::string& run, const std::string& step) {
    auto view = ledger_->ShowRun(run, exec_);
    EXPECT_TRUE(view.ok());
    for (const StepView& s : view.value().steps) {
      if (s.step_id == step) return s.unfittable;
    }
    ADD_FAILURE() << "no step " << step;
    return std::nullopt;
  }
};

TEST_F(UnfittableTest, AStepNoLiveWorkerCanFitSaysWhatItNeeds) {
  Register("a");
  const std::string run = StartRunOf("wf");
  EXPECT_FALSE(UnfittableOf(run, "big")) << "no worker has offered anything yet";
  ASSERT_EQ(ClaimOffering("a", 2, 2).size(), 1u);  // takes "small"; "big" cannot be offered
  auto u = UnfittableOf(run, "big");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->reason, "needs 3 nodes, largest offer 2");
  EXPECT_EQ(u->workers, 1);
  EXPECT_FALSE(UnfittableOf(run, "small")) << "leased, not queued";
}

TEST_F(UnfittableTest, ABusyWorkersPartialOfferDoesNotShrinkItsLargestOffer) {
  Register("a");
  const std::string run = StartRunOf("wf");
  ASSERT_EQ(ClaimOffering("a", 3, 1).size(), 1u);  // idle: offers 3 nodes, takes "small"
  EXPECT_FALSE(UnfittableOf(run, "big"));
  ClaimOffering("a", 2, 1);  // "big" needs 3; holding "small", only 2 are free now
  EXPECT_FALSE(UnfittableOf(run, "big")) << "the worker has 3 nodes when idle";
}

TEST_F(UnfittableTest, AWorkerOfUnknownSizeLeavesTheStepUnmarked) {
  Register("a");
  Register("b");
  const std::string run = StartRunOf("wf");
  ASSERT_EQ(ClaimOffering("a", 2, 2).size(), 1u);       // "small"
  ASSERT_EQ(ClaimOffering("b", std::nullopt).size(), 1u);  // no `free`: b is offered "big" and takes it
  const std::string run2 = StartRunOf("wf");
  EXPECT_FALSE(UnfittableOf(run2, "big")) << "b claims without free: it might fit";
}

TEST_F(UnfittableTest, OneLiveWorkerThatFitsLeavesTheStepUnmarked) {
  Register("a");
  Register("b");
  const std::string run = StartRunOf("wf");
  ASSERT_EQ(ClaimOffering("b", 4, 1).size(), 1u);  // idle b offers 4 nodes, takes "small"
  EXPECT_TRUE(ClaimOffering("a", 2, 1).empty());   // "big" does not fit a
  EXPECT_FALSE(UnfittableOf(run, "big")) << "b has 4 nodes when idle";
}

TEST_F(UnfittableTest, AWorkerNotSeenFor90SecondsAndHoldingNothingDoesNotCount) {
  Register("a");
  EXPECT_TRUE(ClaimOffering("a", 1, 1).empty());  // idle, nothing to offer yet: its offer is 1 node
  const std::string run = StartRunOf("wf");
  auto u = UnfittableOf(run, "big");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->reason, "needs 3 nodes, largest offer 1");
  EXPECT_FALSE(UnfittableOf(run, "small"));
  clock_->Advance(kLiveWorkerMs + 1);
  EXPECT_FALSE(UnfittableOf(run, "big")) << "no live worker: no verdict";
}

}  // namespace
}  // namespace scimesh::coordinator

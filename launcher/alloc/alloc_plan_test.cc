// scimesh-alloc's decision: submit for uncovered demand within the limits,
// cancel pending jobs nothing needs, report steps no shape fits.
#include "launcher/alloc/alloc_plan.h"

#include <gtest/gtest.h>

namespace scimesh::alloc {
namespace {

DemandGroup Group(std::string step, int64_t runnable, int64_t nodes = 1, int64_t walltime_s = 60,
                  std::optional<int64_t> claimable = 0) {
  DemandGroup g;
  g.workflow = "mesh";
  g.version = "1";
  g.step_id = std::move(step);
  g.resources.nodes = nodes;
  g.walltime_s = walltime_s;
  g.runnable = runnable;
  g.claimable_by_live_workers = claimable;
  return g;
}

// One node, 10 minutes, 2 cores: less the 120 s margin, 480 node-seconds,
// 16 one-core steps of 60 s (two at once).
const Shape kSmall{1, 600, 2, 0};
const Shape kWide{2, 600, 2, 0};

PlanInput Input(std::vector<DemandGroup> demand, std::vector<OurJob> jobs = {},
                std::vector<Shape> shapes = {kSmall}) {
  PlanInput in;
  in.demand = std::move(demand);
  in.jobs = std::move(jobs);
  in.shapes = std::move(shapes);
  in.limits = {.max_jobs = 10, .max_nodes = 20, .backlog = 10, .margin_s = 120};
  return in;
}

OurJob Pending(std::string id, int64_t nodes = 1) { return {std::move(id), true, nodes, 600, 0}; }
OurJob Running(std::string id, int64_t running_s, int64_t nodes = 1) {
  return {std::move(id), false, nodes, 600, running_s};
}

TEST(AllocPlan, NoDemandNoJobsDoesNothing) {
  const Plan plan = MakePlan(Input({}));
  EXPECT_TRUE(plan.submit.empty());
  EXPECT_TRUE(plan.cancel.empty());
  EXPECT_TRUE(plan.held_back.empty());
}

TEST(AllocPlan, SizesTheSubmissionsToWhatOneAllocationRunsBeforeItsEnd) {
  const Plan plan = MakePlan(Input({Group("a", 30)}));
  ASSERT_EQ(plan.submit.size(), 2u);  // 16 per allocation
  EXPECT_EQ(plan.submit[0].for_key, "mesh/1/a");
  EXPECT_EQ(plan.runnable, 30);
  EXPECT_EQ(plan.uncovered, 30);
  EXPECT_EQ(MakePlan(Input({Group("a", 16)})).submit.size(), 1u);
  EXPECT_EQ(MakePlan(Input({Group("a", 17)})).submit.size(), 2u);
}

TEST(AllocPlan, TheLiveWorkersViewIsNotCounted) {
  // claimable_by_live_workers counts a worker's capacity once per group.
  const Plan plan = MakePlan(Input({Group("a", 20, 1, 60, 20)}));
  EXPECT_EQ(plan.uncovered, 20);
  EXPECT_EQ(plan.submit.size(), 2u);
}

TEST(AllocPlan, RunningJobsCoverWithTheTimeTheyHaveLeftAndPendingOnesWithAllOfIt) {
  EXPECT_TRUE(MakePlan(Input({Group("a", 16)}, {Pending("7")})).submit.empty());
  EXPECT_EQ(MakePlan(Input({Group("a", 20)}, {Pending("7")})).submit.size(), 1u);
  // 600 - 10 - 120 s left on 1 node: 15 steps of 30 node-s.
  EXPECT_TRUE(MakePlan(Input({Group("a", 15)}, {Running("7", 10)})).submit.empty());
  Plan plan = MakePlan(Input({Group("a", 16)}, {Running("7", 10)}));
  EXPECT_EQ(plan.uncovered, 1);
  EXPECT_EQ(plan.submit.size(), 1u);
  // Inside its drain margin it covers nothing.
  EXPECT_EQ(MakePlan(Input({Group("a", 1)}, {Running("7", 480)})).submit.size(), 1u);
  // The job with the least time left is used first: the other stays whole.
  plan = MakePlan(Input({Group("a", 3), Group("w", 1, 2)}, {Running("8", 100, 2), Running("9", 400)}, {kSmall, kWide}));
  EXPECT_TRUE(plan.submit.empty()) << plan.held_back;
}

TEST(AllocPlan, APendingJobNothingNeedsIsCancelledAndARunningOneNever) {
  const Plan plan = MakePlan(Input({}, {Pending("7"), Running("8", 5), Pending("9")}));
  ASSERT_EQ(plan.cancel.size(), 2u);
  EXPECT_EQ(plan.cancel[0].job_id, "7");
  EXPECT_EQ(plan.cancel[1].job_id, "9");
  EXPECT_EQ(plan.cancel[0].reason, "no demand left for it");
  // The oldest pending job is kept for the demand that is left.
  const Plan some = MakePlan(Input({Group("a", 3)}, {Pending("7"), Pending("9")}));
  ASSERT_EQ(some.cancel.size(), 1u);
  EXPECT_EQ(some.cancel[0].job_id, "9");
}

TEST(AllocPlan, NeverPassesItsLimits) {
  auto in = Input({Group("a", 200)});
  in.limits.max_jobs = 3;
  Plan plan = MakePlan(in);
  EXPECT_EQ(plan.submit.size(), 3u);
  EXPECT_EQ(plan.held_back, "--max-jobs 3 reached");

  in.jobs = {Running("1", 100), Running("2", 100)};
  EXPECT_EQ(MakePlan(in).submit.size(), 1u);

  in = Input({Group("w", 40, 2)}, {}, {kWide});
  in.limits.max_nodes = 5;
  plan = MakePlan(in);
  EXPECT_EQ(plan.submit.size(), 2u);
  EXPECT_EQ(plan.held_back, "--max-nodes 5 would be passed");

  in = Input({Group("a", 200)}, {Pending("1")});
  in.limits.backlog = 2;
  plan = MakePlan(in);
  EXPECT_EQ(plan.submit.size(), 1u);
  EXPECT_EQ(plan.held_back, "--backlog 2 reached");
}

TEST(AllocPlan, AStepNoShapeFitsIsReportedAndNeverSubmittedFor) {
  const Plan plan = MakePlan(Input({Group("huge", 3, 4), Group("long", 1, 1, 3600)}, {}, {kSmall, kWide}));
  EXPECT_TRUE(plan.submit.empty());
  ASSERT_EQ(plan.unfittable.size(), 2u);
  EXPECT_EQ(plan.unfittable[0].key, "mesh/1/huge");
  EXPECT_EQ(plan.unfittable[0].reason, "needs 4 nodes, the shape has 2");
  EXPECT_EQ(plan.unfittable[0].runnable, 3);
  EXPECT_EQ(plan.unfittable[1].reason,
            "needs 3600 s, the shape runs steps for 480 s (time 00:10:00 less the 120 s drain margin)");
  EXPECT_EQ(MakePlan(Input({Group("a", 1)}, {}, {})).unfittable[0].reason, "no shape is configured");
}

TEST(AllocPlan, PicksTheShapeThatNeedsFewestJobsThenTheSmallest) {
  const std::vector<Shape> shapes{kWide, kSmall};
  Plan plan = MakePlan(Input({Group("a", 1)}, {}, shapes));
  ASSERT_EQ(plan.submit.size(), 1u);
  EXPECT_EQ(plan.submit[0].shape, 1u);  // one small job is enough
  plan = MakePlan(Input({Group("a", 30)}, {}, shapes));
  ASSERT_EQ(plan.submit.size(), 1u);
  EXPECT_EQ(plan.submit[0].shape, 0u);  // one wide job instead of two small
}

TEST(AllocPlan, WideStepsAreCoveredFirstAndNarrowOnesFillWhatIsLeft) {
  // A wide job has 960 node-s: the 4 two-node steps take 240 (60 each), and
  // 24 one-node steps (30 each) the rest.
  auto in = Input({Group("narrow", 40), Group("wide", 4, 2)}, {}, {kSmall, kWide});
  in.limits.max_jobs = 1;
  const Plan plan = MakePlan(in);
  ASSERT_EQ(plan.submit.size(), 1u);
  EXPECT_EQ(plan.submit[0].for_key, "mesh/1/wide");
  EXPECT_EQ(plan.held_back, "--max-jobs 1 reached");
}

TEST(AllocPlan, ASmallerShapeIsTakenWhenTheBestOneWouldPassALimit) {
  auto in = Input({Group("a", 50)}, {Running("1", 100, 2)}, {kWide, kSmall});
  in.limits.max_nodes = 3;  // a wide job would make 4
  Plan plan = MakePlan(in);
  ASSERT_EQ(plan.submit.size(), 1u);
  EXPECT_EQ(plan.submit[0].shape, 1u);
  EXPECT_EQ(plan.held_back, "--max-nodes 3 would be passed");
}

TEST(AllocPlan, UncoveredCountsWhatItsJobsDoNotCoverNotWhatThisPlanSubmits) {
  std::vector<DemandGroup> groups;  // 20 steps of one copy each, as a study of distinct steps is
  for (int i = 0; i < 20; ++i) groups.push_back(Group("s" + std::to_string(i), 1));
  auto in = Input(groups);
  in.limits.backlog = 1;
  const Plan plan = MakePlan(in);
  EXPECT_EQ(plan.runnable, 20);
  EXPECT_EQ(plan.uncovered, 20);
  EXPECT_EQ(plan.submit.size(), 1u);  // 16 of them; the backlog holds the rest back
  EXPECT_EQ(plan.held_back, "--backlog 1 reached");
  in.jobs = {Pending("4")};
  EXPECT_EQ(MakePlan(in).uncovered, 4);
}

TEST(AllocPlan, StepsWaitingOnNeedsAreCountedButNotDemand) {
  auto g = Group("later", 0);
  g.waiting = 12;
  const Plan plan = MakePlan(Input({g}, {Pending("3")}));
  EXPECT_EQ(plan.waiting, 12);
  EXPECT_TRUE(plan.submit.empty());
  EXPECT_EQ(plan.cancel.size(), 1u);
}

TEST(AllocPlan, AHeldJobOfAnUnknownShapeStillCovers) {
  // Submitted under another configuration: 1 node, 20 minutes.
  OurJob job{"5", true, 1, 1200, 0};
  EXPECT_TRUE(MakePlan(Input({Group("a", 30)}, {job})).submit.empty());  // 1080 node-s: 36 steps
}

}  // namespace
}  // namespace scimesh::alloc

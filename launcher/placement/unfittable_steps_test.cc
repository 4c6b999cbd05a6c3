// Steps the allocation can never run are named, with what they need.
#include "launcher/placement/unfittable_steps.h"

#include <gtest/gtest.h>

namespace scimesh::launcher {
namespace {

FreeCapacity TwoNodesOf4Cpus(int64_t walltime_s) {
  return FreeCapacity{{{"n1", 4, 0}, {"n2", 4, 0}}, walltime_s};
}

StepDefinition Step(const std::string& id, int64_t nodes, std::optional<int64_t> walltime_s = std::nullopt) {
  StepDefinition s;
  s.id = id;
  s.resources = Resources{nodes, 1, 1, 0};
  s.walltime_s = walltime_s;
  return s;
}

TEST(UnfittableSteps, NamesEveryStepTheAllocationCannotRunAndNoOther) {
  WorkflowDefinition wf{"mesh-study", "1", {Step("small", 2, 60), Step("big", 3, 60), Step("long", 1, 7200)}};
  StepDefinition plain;  // no resources, no walltime: 1 node, 1 cpu, the 3600 s default
  plain.id = "plain";
  wf.steps.push_back(plain);
  auto out = UnfittableSteps({wf}, TwoNodesOf4Cpus(3480));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0], "big (mesh-study@1): needs 3 nodes, largest offer 2");
  EXPECT_EQ(out[1], "long (mesh-study@1): needs 7200 s of walltime, largest offer 3480 s");
  EXPECT_EQ(out[2], "plain (mesh-study@1): needs 3600 s of walltime, largest offer 3480 s");
}

TEST(UnfittableSteps, EverythingFitsAnUnlimitedAllocation) {
  WorkflowDefinition wf{"w", "1", {Step("a", 2), Step("b", 1, 7200)}};
  EXPECT_TRUE(UnfittableSteps({wf}, TwoNodesOf4Cpus(604800)).empty());
}

TEST(UnfittableSteps, TheIdleExitTailListsThem) {
  EXPECT_EQ(UnfittableTail({}), "");
  EXPECT_EQ(UnfittableTail({"a (w@1): x", "b (w@1): y"}), "; cannot fit this allocation: a (w@1): x; b (w@1): y");
}

}  // namespace
}  // namespace scimesh::launcher

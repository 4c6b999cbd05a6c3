// Unit tests for the claim's free capacity and max.
#include "launcher/placement/capacity.h"

#include <gtest/gtest.h>

#include "tests/launcher/topology_test_util.h"

namespace scimesh::launcher {
namespace {

using std::chrono::seconds;

TEST(CapacityTest, FreeListsNodesWithAFreeCpuAndWalltimeMinusMargin) {
  ClaimPolicy policy;
  policy.drain_margin = seconds(120);
  policy.concurrency = 64;
  auto c = ComputeClaimCapacity({{"n1", 2, 2, 0}, {"n2", 0, 0, 1}, {"n3", 3, 1, 2}}, seconds(3600), 0, policy);
  ASSERT_EQ(c.free.nodes.size(), 2u);
  EXPECT_EQ(c.free.nodes[0].name, "n1");
  EXPECT_EQ(c.free.nodes[1].gpus, 2);
  EXPECT_EQ(c.free.walltime_s, 3480);
  EXPECT_EQ(c.max, 5);
  EXPECT_EQ(c.free.nodes[1].name, "n3");
  EXPECT_EQ(c.free.nodes[1].cpus, 3);
}

TEST(CapacityTest, MaxIsBoundedByCpusConcurrencyAndTheProtocol) {
  ClaimPolicy policy;
  policy.concurrency = 10;
  EXPECT_EQ(ComputeClaimCapacity({{"n1", 200, 100, 0}}, std::nullopt, 4, policy).max, 6);
  policy.concurrency = 1000;
  EXPECT_EQ(ComputeClaimCapacity({{"n1", 200, 100, 0}}, std::nullopt, 0, policy).max, 64);
  EXPECT_EQ(ComputeClaimCapacity({{"n1", 200, 100, 0}}, std::nullopt, 0, policy).free.walltime_s, kUnlimitedWalltimeS);
  policy.concurrency = 3;
  EXPECT_EQ(ComputeClaimCapacity({{"n1", 8, 8, 0}}, std::nullopt, 5, policy).max, 0);
}

TEST(CapacityTest, NothingToOfferMeansMaxZero) {
  ClaimPolicy policy;
  EXPECT_EQ(ComputeClaimCapacity({{"n1", 0, 0, 4}}, seconds(3600), 0, policy).max, 0);
  auto late = ComputeClaimCapacity({{"n1", 4, 4, 0}}, seconds(100), 0, policy);
  EXPECT_EQ(late.free.walltime_s, 0);
  EXPECT_EQ(late.max, 0);
  EXPECT_EQ(ComputeClaimCapacity({{"n1", 4, 4, 0}}, seconds(121), 0, policy).max, 4);
}

TEST(CapacityTest, FollowsThePlacerAsStepsComeAndGo) {
  auto t = testing::Synthetic("pack:1 core:4 pu:1");
  auto created = Placer::Create({{"n1", t}, {"n2", t}});
  ASSERT_TRUE(created.ok());
  auto& placer = *created;
  ClaimPolicy policy;
  StepResources whole;
  whole.ranks_per_node = 4;
  auto p = placer->Place(whole);
  ASSERT_TRUE(p.ok());
  auto c = ComputeClaimCapacity(placer->Free(), seconds(600), placer->held(), policy);
  ASSERT_EQ(c.free.nodes.size(), 1u);
  EXPECT_EQ(c.free.nodes[0].name, "n2");
  EXPECT_EQ(c.max, 4);
  ASSERT_TRUE(placer->Release(p->id).ok());
  EXPECT_EQ(ComputeClaimCapacity(placer->Free(), seconds(600), placer->held(), policy).max, 8);
}

}  // namespace
}  // namespace scimesh::launcher

// Tests of capacity fitting and first-fit packing of claim offers.
#include "coordinator/capacity.h"

#include <gtest/gtest.h>

namespace scimesh::coordinator {
namespace {

FreeCapacity TwoNodes(int64_t cpus, int64_t gpus = 0, int64_t walltime = 3600) {
  return FreeCapacity{{{"n1", cpus, gpus}, {"n2", cpus, gpus}}, walltime};
}

TEST(TakeCapacity, FitsWhenEveryNodeHasEnough) {
  FreeCapacity free = TwoNodes(2);
  Resources r{2, 2, 1, 0};  // 2 nodes x 2 ranks x 1 cpu
  EXPECT_TRUE(TakeCapacity(free, r, 600));
  EXPECT_EQ(free.nodes[0].cpus, 0);
  EXPECT_EQ(free.nodes[1].cpus, 0);
}

TEST(TakeCapacity, RefusesTooFewNodesAndLeavesFreeUnchanged) {
  FreeCapacity free{{{"n1", 8, 0}}, 3600};
  EXPECT_FALSE(TakeCapacity(free, Resources{2, 1, 1, 0}, 60));
  EXPECT_EQ(free.nodes[0].cpus, 8);
}

TEST(TakeCapacity, RefusesWhenCpusPerNodeDoNotFit) {
  FreeCapacity free = TwoNodes(3);
  EXPECT_FALSE(TakeCapacity(free, Resources{1, 2, 2, 0}, 60));  // needs 4 cpus on one node
}

TEST(TakeCapacity, RefusesWhenGpusDoNotFit) {
  FreeCapacity free = TwoNodes(8, 1);
  EXPECT_FALSE(TakeCapacity(free, Resources{1, 2, 1, 1}, 60));  // needs 2 gpus on one node
  EXPECT_TRUE(TakeCapacity(free, Resources{1, 1, 1, 1}, 60));
}

TEST(TakeCapacity, RefusesWhenWalltimeExceedsWhatIsLeft) {
  FreeCapacity free = TwoNodes(8, 0, 100);
  EXPECT_FALSE(TakeCapacity(free, Resources{}, 101));
  EXPECT_TRUE(TakeCapacity(free, Resources{}, 100));
}

TEST(TakeCapacity, PacksOntoTheNodesWithTheMostFreeCpus) {
  FreeCapacity free{{{"small", 2, 0}, {"big", 6, 0}}, 3600};
  Resources one_node_two_cpus{1, 2, 1, 0};
  ASSERT_TRUE(TakeCapacity(free, one_node_two_cpus, 60));
  EXPECT_EQ(free.nodes[1].cpus, 4);  // taken from "big"
  ASSERT_TRUE(TakeCapacity(free, one_node_two_cpus, 60));
  EXPECT_EQ(free.nodes[1].cpus, 2);
  ASSERT_TRUE(TakeCapacity(free, one_node_two_cpus, 60));  // tie: the worker's order
  EXPECT_EQ(free.nodes[0].cpus, 0);
  ASSERT_TRUE(TakeCapacity(free, one_node_two_cpus, 60));
  EXPECT_EQ(free.nodes[1].cpus, 0);
  EXPECT_FALSE(TakeCapacity(free, one_node_two_cpus, 60));  // max leases never exceed free
}

TEST(TakeCapacity, SkipsANodeWithCpusButNoGpus) {
  FreeCapacity free{{{"cpu-only", 16, 0}, {"gpu", 4, 2}}, 3600};
  ASSERT_TRUE(TakeCapacity(free, Resources{1, 1, 2, 1}, 60));
  EXPECT_EQ(free.nodes[0].cpus, 16);
  EXPECT_EQ(free.nodes[1].cpus, 2);
  EXPECT_EQ(free.nodes[1].gpus, 1);
}

TEST(CopiesThatFit, CountsWholeStepsUpToTheBound) {
  const FreeCapacity free = TwoNodes(4);                   // 2 nodes x 4 cpus
  EXPECT_EQ(CopiesThatFit(free, Resources{2, 2, 1, 0}, 60, 10), 2);  // each takes 2 cpus of both nodes
  EXPECT_EQ(CopiesThatFit(free, Resources{1, 1, 1, 0}, 60, 10), 8);
  EXPECT_EQ(CopiesThatFit(free, Resources{1, 1, 1, 0}, 60, 3), 3) << "at most the bound";
  EXPECT_EQ(CopiesThatFit(free, Resources{3, 1, 1, 0}, 60, 10), 0) << "3 nodes never fit 2";
  EXPECT_EQ(CopiesThatFit(free, Resources{1, 1, 1, 0}, 7200, 10), 0) << "walltime";
}

}  // namespace
}  // namespace scimesh::coordinator

// Unit tests for OrderForPlacement: a claim's set that fits as a whole is
// placed whole.
#include "launcher/placement/claim_order.h"

#include <gtest/gtest.h>

#include "tests/launcher/topology_test_util.h"

namespace scimesh::launcher {
namespace {

Lease Step(const char* id, int64_t nodes, int64_t ranks_per_node, int64_t cpus_per_rank = 1) {
  Lease l;
  l.step_id = id;
  l.resources.nodes = nodes;
  l.resources.ranks_per_node = ranks_per_node;
  l.resources.cpus_per_rank = cpus_per_rank;
  return l;
}

std::unique_ptr<Placer> TwoNodesOfTwoCores() {
  auto t = testing::Synthetic("pack:1 core:2 pu:1");
  auto p = Placer::Create({{"n1", t}, {"n2", t}});
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return std::move(*p);
}

// The set the coordinator offered for free = {n1: 2, n2: 2}, in its order.
std::vector<Lease> OfferedSet() { return {Step("one-a", 1, 1), Step("one-b", 1, 1), Step("wide", 2, 1)}; }

TEST(ClaimOrder, ArrivalOrderCanStrandAStepOfASetThatFits) {
  // The failure this ordering exists for: the placer packs one node first.
  auto placer = TwoNodesOfTwoCores();
  std::vector<Lease> leases = OfferedSet();
  int placed = 0;
  for (const Lease& l : leases) placed += placer->Place(ResourcesOf(l)).ok() ? 1 : 0;
  EXPECT_EQ(placed, 2);
}

TEST(ClaimOrder, WidestFirstPlacesTheWholeSet) {
  auto placer = TwoNodesOfTwoCores();
  std::vector<Lease> leases = OfferedSet();
  OrderForPlacement(leases);
  ASSERT_EQ(leases.front().step_id, "wide");
  for (const Lease& l : leases) EXPECT_TRUE(placer->Place(ResourcesOf(l)).ok()) << l.step_id;
  for (const NodeFree& n : placer->Free()) EXPECT_EQ(n.cpus, 0) << n.name;
}

TEST(ClaimOrder, StableAmongEqualsAndCpusBreakTies) {
  std::vector<Lease> leases = {Step("a", 1, 1), Step("b", 1, 2), Step("c", 1, 1), Step("d", 1, 1, 2), Step("e", 3, 1)};
  OrderForPlacement(leases);
  std::string order;
  for (const Lease& l : leases) order += l.step_id;
  EXPECT_EQ(order, "ebdac");
}

}  // namespace
}  // namespace scimesh::launcher

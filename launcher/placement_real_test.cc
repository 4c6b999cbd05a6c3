// Placement on real machines' topologies from ../shared/topologies (skipped
// when that directory is absent). Every property is checked against raw
// hwloc, independently of the placer's own model.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "launcher/placement/placement.h"
#include "tests/launcher/topology_test_util.h"

namespace scimesh::launcher {
namespace {

using testing::HaveTopologyDir;
using testing::RawHwloc;
using testing::RealTopology;

class RealPlacementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HaveTopologyDir()) {
      GTEST_SKIP() << "real topologies not found at " << testing::TopologyDir()
                   << " (../shared is absent in this checkout)";
    }
  }

  void Load(const std::string& file) {
    topology_ = RealTopology(file);
    ASSERT_NE(topology_, nullptr);
    raw_ = std::make_unique<RawHwloc>(testing::TopologyDir() + "/" + file);
    auto p = Placer::Create({{"node", topology_}});
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    placer_ = std::move(*p);
  }

  static StepResources Step(int ranks, int cpus, int gpus = 0) {
    StepResources s;
    s.ranks_per_node = ranks;
    s.cpus_per_rank = cpus;
    s.gpus_per_rank = gpus;
    return s;
  }

  // Places 1-cpu steps until the node is full; checks each on the way.
  int FillWithSingleCpuSteps() {
    int placed = 0;
    std::set<int> used;
    for (;;) {
      auto p = placer_->Place(Step(1, 1));
      if (!p.ok()) {
        EXPECT_EQ(p.status().code(), Code::kUnavailable) << p.status().ToString();
        break;
      }
      const int pu = p->ranks[0].cpus[0];
      EXPECT_TRUE(raw_->Allowed(pu)) << "PU " << pu << " outside the allowed cpuset";
      EXPECT_TRUE(raw_->Online(pu)) << "PU " << pu << " is offline";
      EXPECT_TRUE(used.insert(pu).second) << "PU " << pu << " placed twice";
      ++placed;
    }
    return placed;
  }

  std::shared_ptr<const Topology> topology_;
  std::unique_ptr<RawHwloc> raw_;
  std::unique_ptr<Placer> placer_;
};

TEST_F(RealPlacementTest, DgxTwoGivesEachRankGpusOfItsOwnPackage) {
  Load("nvidiaDGX2.xml");
  auto p = placer_->Place(Step(4, 1, 4));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  std::set<int> all;
  for (const RankPlacement& r : p->ranks) {
    ASSERT_EQ(r.gpus.size(), 4u);
    for (int g : r.gpus) {
      all.insert(g);
      const std::vector<int> local = raw_->LocalityOf(topology_->gpus()[static_cast<size_t>(g)].name);
      EXPECT_TRUE(std::find(local.begin(), local.end(), r.cpus[0]) != local.end())
          << "rank " << r.rank << " on PU " << r.cpus[0] << " got non-local GPU " << g;
    }
  }
  EXPECT_EQ(all.size(), 16u);
  auto more = placer_->Place(Step(1, 1, 1));
  EXPECT_EQ(more.status().code(), Code::kUnavailable);
}

TEST_F(RealPlacementTest, DgxTwoSuccessiveGpuStepsStayLocal) {
  Load("nvidiaDGX2.xml");
  // A CPU-only step takes the first package's two cores; then 1-cpu 4-gpu
  // steps run on the second package and must get its GPUs, not nvml0-7.
  auto cpu = placer_->Place(Step(1, 2));
  ASSERT_TRUE(cpu.ok());
  ASSERT_EQ(raw_->PackageOf(cpu->ranks[0].cpus[0]), raw_->PackageOf(cpu->ranks[0].cpus[1]));
  for (int i = 0; i < 2; ++i) {
    auto p = placer_->Place(Step(1, 1, 4));
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    const RankPlacement& r = p->ranks[0];
    for (int g : r.gpus) {
      const std::vector<int> local = raw_->LocalityOf(topology_->gpus()[static_cast<size_t>(g)].name);
      EXPECT_TRUE(std::find(local.begin(), local.end(), r.cpus[0]) != local.end()) << "step " << i << " GPU " << g;
    }
  }
}

TEST_F(RealPlacementTest, TwoRanksOfFourCpusOnTheTwentyFourNumaMachineShareOneNumaNode) {
  Load("192em64t-24n8c2t.xml");
  auto p = placer_->Place(Step(2, 4));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  std::vector<int> pus;
  std::set<std::vector<int>> cores;
  for (const RankPlacement& r : p->ranks) {
    pus.insert(pus.end(), r.cpus.begin(), r.cpus.end());
    for (int pu : r.cpus) cores.insert(raw_->CoreOf(pu));
  }
  EXPECT_EQ(raw_->NumaHolding(pus).size(), 1u) << "8 cpus of one step span NUMA nodes";
  EXPECT_EQ(cores.size(), 8u) << "one PU per core";
}

TEST_F(RealPlacementTest, NoHyperthreadSiblingWhileAnyCoreIsIdle) {
  Load("192em64t-24n8c2t.xml");
  std::set<std::vector<int>> cores;
  for (int i = 0; i < 192; ++i) {
    auto p = placer_->Place(Step(1, 1));
    ASSERT_TRUE(p.ok());
    ASSERT_FALSE(p->shares_cores);
    ASSERT_TRUE(cores.insert(raw_->CoreOf(p->ranks[0].cpus[0])).second)
        << "step " << i << " used a sibling of a busy core while cores were idle";
  }
  // The next 192 single-cpu steps use the siblings, then the node is full.
  EXPECT_EQ(FillWithSingleCpuSteps(), 192);
}

TEST_F(RealPlacementTest, SuccessiveNumaSizedStepsTakeOneNumaNodeEach) {
  Load("192em64t-24n8c2t.xml");
  std::set<int> numa_used;
  for (int i = 0; i < 24; ++i) {
    auto p = placer_->Place(Step(1, 8));
    ASSERT_TRUE(p.ok());
    const std::vector<int> holding = raw_->NumaHolding(p->ranks[0].cpus);
    ASSERT_EQ(holding.size(), 1u) << "step " << i;
    EXPECT_TRUE(numa_used.insert(holding[0]).second);
  }
}

TEST_F(RealPlacementTest, RestrictedCpusetsAreNeverCrossed) {
  Load("16amd64-8n2c-cpusets.xml");
  const int allowed = hwloc_bitmap_weight(hwloc_topology_get_allowed_cpuset(raw_->get()));
  EXPECT_EQ(placer_->Free()[0].cpus, allowed);
  EXPECT_EQ(FillWithSingleCpuSteps(), allowed);
}

TEST_F(RealPlacementTest, OfflinePusAreNeverChosen) {
  Load("16em64t-4s2c2t-offlines.xml");
  const int online = hwloc_bitmap_weight(hwloc_topology_get_topology_cpuset(raw_->get()));
  EXPECT_EQ(FillWithSingleCpuSteps(), online);
}

TEST_F(RealPlacementTest, HeterogeneousKindsPreferTheMostPerformant) {
  Load("fakecpukinds.xml");
  auto p = placer_->Place(Step(1, 1));
  ASSERT_TRUE(p.ok());
  const std::vector<int> best = raw_->BestKind();
  EXPECT_TRUE(std::find(best.begin(), best.end(), p->ranks[0].cpus[0]) != best.end())
      << "PU " << p->ranks[0].cpus[0] << " is not of the most performant kind";
}

TEST_F(RealPlacementTest, KnlSnc4RankStaysInOneClusterWithBothMemories) {
  Load("64intel64-fakeKNL-SNC4-hybrid.xml");
  auto p = placer_->Place(Step(1, 4));
  ASSERT_TRUE(p.ok());
  const RankPlacement& r = p->ranks[0];
  // One SNC cluster: its DDR and its MCDRAM node both hold every PU.
  EXPECT_EQ(raw_->NumaHolding(r.cpus).size(), 2u);
  std::vector<int> holding = raw_->NumaHolding(r.cpus);
  std::sort(holding.begin(), holding.end());
  EXPECT_EQ(r.numa, holding);
}

}  // namespace
}  // namespace scimesh::launcher

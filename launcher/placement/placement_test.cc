// Unit tests for the Placer on synthetic topologies (present in every
// checkout): compactness, cores before hyperthreads, GPUs near their ranks,
// CPU kinds, restricted cpusets, multi-node steps, errors and invariants.
#include "launcher/placement/placement.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "tests/launcher/topology_test_util.h"

namespace scimesh::launcher {
namespace {

using testing::GpuMachineXml;
using testing::RawHwloc;
using testing::Synthetic;
using testing::SyntheticXml;

std::unique_ptr<Placer> MakePlacer(std::vector<NodeSpec> specs) {
  auto p = Placer::Create(std::move(specs));
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? std::move(*p) : nullptr;
}

std::unique_ptr<Placer> OneNode(std::shared_ptr<const Topology> t) { return MakePlacer({{"n1", std::move(t)}}); }

StepResources Step(int nodes, int ranks_per_node, int cpus, int gpus = 0) {
  StepResources s;
  s.nodes = nodes;
  s.ranks_per_node = ranks_per_node;
  s.cpus_per_rank = cpus;
  s.gpus_per_rank = gpus;
  return s;
}

// The synthetic "pack:2 numa:2 core:4 pu:2" numbers PUs in order: core c
// holds PUs 2c and 2c+1, NUMA node n holds cores 4n..4n+3.
int CoreOfPu(int pu) { return pu / 2; }
int NumaOfPu(int pu) { return pu / 8; }

TEST(PlacementTest, TwoRanksOfFourCpusLandCompactOnePuPerCore) {
  auto placer = OneNode(Synthetic("pack:2 numa:2 core:4 pu:2"));
  auto p = placer->Place(Step(1, 2, 4));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->ranks.size(), 2u);
  std::set<int> cores, packages;
  for (const RankPlacement& r : p->ranks) {
    ASSERT_EQ(r.cpus.size(), 4u);
    std::set<int> numa;
    for (int pu : r.cpus) {
      cores.insert(CoreOfPu(pu));
      numa.insert(NumaOfPu(pu));
      packages.insert(pu / 16);
    }
    EXPECT_EQ(numa.size(), 1u) << "a 4-cpu rank fits one NUMA node of 4 idle cores";
    EXPECT_EQ(r.numa, std::vector<int>{*numa.begin()});
  }
  EXPECT_EQ(cores.size(), 8u) << "one PU per core while idle cores remain";
  EXPECT_EQ(packages.size(), 1u) << "the step stays in one package";
  EXPECT_FALSE(p->shares_cores);
}

TEST(PlacementTest, PhysicalCoresBeforeHyperthreads) {
  auto placer = OneNode(Synthetic("pack:1 core:4 pu:2"));
  std::set<int> cores;
  for (int i = 0; i < 4; ++i) {
    auto p = placer->Place(Step(1, 1, 1));
    ASSERT_TRUE(p.ok());
    EXPECT_FALSE(p->shares_cores);
    EXPECT_TRUE(cores.insert(CoreOfPu(p->ranks[0].cpus[0])).second) << "sibling used while a core was idle";
  }
  // No idle core left: the fifth step takes a sibling and says so.
  auto fifth = placer->Place(Step(1, 1, 1));
  ASSERT_TRUE(fifth.ok());
  EXPECT_TRUE(fifth->shares_cores);
  EXPECT_EQ(placer->Free()[0].cpus, 3);
  EXPECT_EQ(placer->Free()[0].idle_cores, 0);
}

TEST(PlacementTest, ARankNeedingMoreCpusThanIdleCoresTakesWholeCores) {
  auto placer = OneNode(Synthetic("pack:1 core:4 pu:2"));
  auto p = placer->Place(Step(1, 1, 6));
  ASSERT_TRUE(p.ok());
  std::set<int> cores;
  for (int pu : p->ranks[0].cpus) cores.insert(CoreOfPu(pu));
  EXPECT_EQ(cores.size(), 3u) << "6 PUs as 3 whole cores, sharing a core with nobody else";
  EXPECT_FALSE(p->shares_cores);
}

TEST(PlacementTest, FullNodeFailsCleanlyAndReleaseGivesCapacityBack) {
  auto placer = OneNode(Synthetic("pack:1 core:2 pu:2"));
  auto a = placer->Place(Step(1, 2, 2));
  ASSERT_TRUE(a.ok());
  auto full = placer->Place(Step(1, 1, 1));
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.status().code(), Code::kUnavailable);
  EXPECT_EQ(full.status().message(), "step needs 1 node with 1 free cpu (1 rank x 1 cpu); 0 of 1 nodes have them: n1 has 0");
  EXPECT_TRUE(placer->Release(a->id).ok());
  EXPECT_EQ(placer->Release(a->id).code(), Code::kNotFound);
  EXPECT_EQ(placer->Free()[0].cpus, 4);
  EXPECT_TRUE(placer->Place(Step(1, 1, 1)).ok());
}

TEST(PlacementTest, MessagesSayWhatTheStepNeedsAndWhatEachNodeHas) {
  auto t = Synthetic("pack:1 core:4 pu:1");
  auto placer = MakePlacer({{"n1", t}, {"n2", t}, {"n3", t}});
  ASSERT_TRUE(placer->Place(Step(1, 1, 2)).ok());  // n1: 2 left
  ASSERT_TRUE(placer->Place(Step(1, 1, 4)).ok());  // n2 or n3 full
  auto p = placer->Place(Step(2, 2, 2));
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), Code::kUnavailable);
  EXPECT_EQ(p.status().message(),
            "step needs 2 nodes with 4 free cpus each (2 ranks x 2 cpus); 1 of 3 nodes has them: "
            "n1 has 2, n2 has 0, n3 has 4");
  auto never = placer->Place(Step(1, 1, 5));
  EXPECT_EQ(never.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(never.status().message(),
            "step needs 1 node with 5 free cpus (1 rank x 5 cpus) and can never fit: when idle n1 has 4, n2 has 4, "
            "n3 has 4");
  EXPECT_EQ(placer->Place(Step(4, 1, 1)).status().message(),
            "step needs 4 nodes with 1 free cpu each (1 rank x 1 cpu); the allocation has 3 nodes");
  auto gpus = placer->Place(Step(1, 1, 1, 1));
  EXPECT_EQ(gpus.status().message(),
            "step needs 1 node with 1 free cpu and 1 free gpu (1 rank x 1 cpu, 1 gpu) and can never fit: when idle "
            "n1 has 4 cpus 0 gpus, n2 has 4 cpus 0 gpus, n3 has 4 cpus 0 gpus");
}

TEST(PlacementTest, InvalidResourcesAreRefusedByField) {
  auto placer = OneNode(Synthetic("core:2 pu:1"));
  EXPECT_EQ(placer->Place(Step(0, 1, 1)).status().message(), "resources.nodes must be 1..65536");
  EXPECT_EQ(placer->Place(Step(1, 0, 1)).status().message(), "resources.ranks_per_node must be 1..65536");
  EXPECT_EQ(placer->Place(Step(1, 1, 0)).status().message(), "resources.cpus_per_rank must be 1..65536");
  EXPECT_EQ(placer->Place(Step(1, 1, 1, -1)).status().message(), "resources.gpus_per_rank must be 0..1024");
  StepResources few = Step(2, 1, 1);
  few.ranks = 1;
  EXPECT_EQ(ValidateStepResources(few).message(), "resources.ranks must be at least nodes (one rank per node)");
}

TEST(PlacementTest, MultiNodeStepsPackAndNumberRanksInAllocationOrder) {
  auto t = Synthetic("pack:1 core:4 pu:1");
  auto placer = MakePlacer({{"n1", t}, {"n2", t}, {"n3", t}});
  // One-cpu steps go to the fullest node that fits: all on n1.
  auto a = placer->Place(Step(1, 1, 1));
  auto b = placer->Place(Step(1, 1, 1));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->nodes[0].name, "n1");
  EXPECT_EQ(b->nodes[0].name, "n1");
  // A two-node step of whole nodes gets n2 and n3, ranks 0-3 on n2, 4-7 on n3.
  auto mpi = placer->Place(Step(2, 4, 1));
  ASSERT_TRUE(mpi.ok()) << mpi.status().ToString();
  ASSERT_EQ(mpi->nodes.size(), 2u);
  EXPECT_EQ(mpi->nodes[0].name, "n2");
  EXPECT_EQ(mpi->nodes[1].name, "n3");
  for (const RankPlacement& r : mpi->ranks) EXPECT_EQ(r.node, r.rank / 4);
  EXPECT_EQ(DescribePlacement(*mpi), "n2 ranks 0-3 cpus 0-3; n3 ranks 4-7 cpus 0-3");
}

TEST(PlacementTest, TotalRanksSpreadBlockWiseLikeSrun) {
  auto t = Synthetic("pack:1 core:4 pu:1");
  auto placer = MakePlacer({{"n1", t}, {"n2", t}});
  StepResources s = Step(2, 0, 1);
  s.ranks = 5;
  auto p = placer->Place(s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->nodes[0].ranks, 3);
  EXPECT_EQ(p->nodes[1].ranks, 2);
  EXPECT_EQ(p->ranks.size(), 5u);
  EXPECT_EQ(p->ranks[2].node, 0);
  EXPECT_EQ(p->ranks[3].node, 1);
}

TEST(PlacementTest, GpusGoToTheRanksTheyAreLocalTo) {
  // Two packages of 2 cores x 2 PUs; GPUs 0,1 on package 0, GPUs 2,3 on package 1.
  auto t = Topology::FromXmlBuffer(GpuMachineXml(2, 2, 2, {0, 0, 1, 1}, false));
  ASSERT_TRUE(t.ok());
  auto placer = OneNode(*t);
  auto p = placer->Place(Step(1, 4, 1, 1));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  for (const RankPlacement& r : p->ranks) {
    ASSERT_EQ(r.gpus.size(), 1u);
    const int package = r.cpus[0] / 4;
    EXPECT_EQ(r.gpus[0] / 2, package) << "rank " << r.rank << " on package " << package << " got GPU " << r.gpus[0];
  }
  EXPECT_EQ(placer->Free()[0].gpus, 0);
  EXPECT_EQ(placer->Place(Step(1, 1, 1, 1)).status().code(), Code::kUnavailable);
}

TEST(PlacementTest, ARankOnTheSecondPackageGetsThatPackagesGpusNotTheLowestIndex) {
  auto t = Topology::FromXmlBuffer(GpuMachineXml(2, 2, 1, {0, 0, 1, 1}, false));
  ASSERT_TRUE(t.ok());
  auto placer = OneNode(*t);
  auto cpu = placer->Place(Step(1, 1, 2));  // fills package 0's two cores
  ASSERT_TRUE(cpu.ok());
  ASSERT_EQ(cpu->ranks[0].cpus, (std::vector<int>{0, 1}));
  auto gpu = placer->Place(Step(1, 1, 1, 2));
  ASSERT_TRUE(gpu.ok());
  EXPECT_GE(gpu->ranks[0].cpus[0], 2);
  EXPECT_EQ(gpu->ranks[0].gpus, (std::vector<int>{2, 3})) << "GPUs 0 and 1 are free but on the other package";
}

TEST(PlacementTest, AGpuStepGoesWhereItsGpusAreAndCpuStepsStayAway) {
  // GPUs only on package 1.
  auto t = Topology::FromXmlBuffer(GpuMachineXml(2, 4, 1, {1, 1}, false));
  ASSERT_TRUE(t.ok());
  auto placer = OneNode(*t);
  auto cpu = placer->Place(Step(1, 1, 2));
  ASSERT_TRUE(cpu.ok());
  for (int pu : cpu->ranks[0].cpus) EXPECT_LT(pu, 4) << "a CPU-only step leaves the GPU package's cores";
  auto gpu = placer->Place(Step(1, 2, 1, 1));
  ASSERT_TRUE(gpu.ok());
  for (const RankPlacement& r : gpu->ranks) EXPECT_GE(r.cpus[0], 4) << "GPU ranks sit next to their GPUs";
}

TEST(PlacementTest, NodeSpecLimitsCpusAndGpus) {
  auto t = Topology::FromXmlBuffer(GpuMachineXml(2, 2, 2, {0, 0, 1, 1}, false));
  ASSERT_TRUE(t.ok());
  NodeSpec limited{"n1", *t};
  limited.cpus = 3;  // whole cores first: PUs 0,1 (core 0) and 2
  limited.gpu_indices = std::vector<int>{1, 3};
  NodeSpec counted{"n2", *t};
  counted.gpus = 1;
  auto placer = MakePlacer({limited, counted});
  auto free = placer->Free();
  EXPECT_EQ(free[0].cpus, 3);
  EXPECT_EQ(free[0].idle_cores, 2);
  EXPECT_EQ(free[0].gpus, 2);
  EXPECT_EQ(free[1].cpus, 8);
  EXPECT_EQ(free[1].gpus, 1);
  auto p = placer->Place(Step(1, 2, 1, 1));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->nodes[0].name, "n1");
  EXPECT_EQ(p->nodes[0].gpus, (std::vector<int>{1, 3}));
  for (int pu : p->nodes[0].cpus) EXPECT_LE(pu, 2);
  NodeSpec bad{"n3", *t};
  bad.gpu_indices = std::vector<int>{7};
  EXPECT_EQ(Placer::Create({bad}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Placer::Create({}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Placer::Create({{"n1", *t}, {"n1", *t}}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Placer::Create({{"n1", nullptr}}).status().code(), Code::kInvalidArgument);
}

TEST(PlacementTest, RestrictedCpusetIsNeverCrossedUnlessTheSpecSaysSo) {
  const std::string xml = SyntheticXml("pack:2 core:2 pu:2", {0, 2, 3, 5});
  auto t = Topology::FromXmlBuffer(xml);
  ASSERT_TRUE(t.ok());
  RawHwloc raw(xml, /*is_text=*/true);
  auto placer = OneNode(*t);
  EXPECT_EQ(placer->Free()[0].cpus, 4);
  for (int i = 0; i < 4; ++i) {
    auto p = placer->Place(Step(1, 1, 1));
    ASSERT_TRUE(p.ok());
    EXPECT_TRUE(raw.Allowed(p->ranks[0].cpus[0])) << "PU " << p->ranks[0].cpus[0];
  }
  EXPECT_FALSE(placer->Place(Step(1, 1, 1)).ok());
  // Another node assumed to be like this one: its allowed set is unknown here.
  NodeSpec remote{"n2", *t};
  remote.use_allowed_set = false;
  EXPECT_EQ(MakePlacer({remote})->Free()[0].cpus, 8);
}

TEST(PlacementTest, MostPerformantKindFirstThenTheNextKindAlone) {
  // Cores 0,1 little (PUs 0,1), cores 2,3 big (PUs 2,3).
  auto t = Topology::FromXmlBuffer(SyntheticXml("core:4 pu:1", {}, {{0, 1}, {2, 3}}));
  ASSERT_TRUE(t.ok());
  auto placer = OneNode(*t);
  auto big = placer->Place(Step(1, 1, 2));
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->ranks[0].cpus, (std::vector<int>{2, 3}));
  auto little = placer->Place(Step(1, 1, 1));
  ASSERT_TRUE(little.ok());
  EXPECT_LT(little->ranks[0].cpus[0], 2);
  // A step too big for one kind mixes them, big ones included.
  auto mixed_placer = OneNode(*t);
  auto mixed = mixed_placer->Place(Step(1, 1, 3));
  ASSERT_TRUE(mixed.ok());
  EXPECT_TRUE(std::includes(mixed->ranks[0].cpus.begin(), mixed->ranks[0].cpus.end(), big->ranks[0].cpus.begin(),
                            big->ranks[0].cpus.end()));
}

TEST(PlacementTest, PlacementJsonIsWhatScimeshRankReads) {
  auto placer = OneNode(Synthetic("pack:2 core:2 pu:1"));
  auto p = placer->Place(Step(1, 2, 2));
  ASSERT_TRUE(p.ok());
  rapidjson::Document doc;
  doc.Parse(PlacementJson(*p).c_str());
  ASSERT_TRUE(doc.IsObject());
  ASSERT_EQ(doc["ranks"].Size(), 2u);
  const auto& r1 = doc["ranks"][1];
  EXPECT_EQ(r1["rank"].GetInt(), 1);
  EXPECT_STREQ(r1["node"].GetString(), "n1");
  ASSERT_EQ(r1["cpus"].Size(), 2u);
  EXPECT_EQ(r1["cpus"][0].GetInt(), p->ranks[1].cpus[0]);
  EXPECT_EQ(r1["gpus"].Size(), 0u);
  EXPECT_EQ(r1["numa"][0].GetInt(), 0);
}

TEST(PlacementTest, DeterministicForTheSameSequence) {
  auto run = [] {
    auto t = Synthetic("pack:2 numa:2 core:3 pu:2");
    auto placer = MakePlacer({{"a", t}, {"b", t}});
    std::vector<std::string> out;
    for (int i = 0; i < 12; ++i) {
      auto p = placer->Place(Step(1 + i % 2, 1 + i % 3, 1 + i % 4));
      out.push_back(p.ok() ? PlacementJson(*p) : p.status().ToString());
      if (i % 5 == 4 && p.ok()) (void)placer->Release(p->id);
    }
    return out;
  };
  const std::vector<std::string> first = run();
  EXPECT_EQ(first, run());
  // Not vacuous: a Placer that always failed would give equal lists too.
  const auto placed = std::count_if(first.begin(), first.end(),
                                    [](const std::string& s) { return s.rfind("{", 0) == 0; });
  EXPECT_GE(placed, 6) << "most of the sequence fits two 24-PU nodes";
}

// Random place/release sequences: no PU or GPU is ever held twice, every PU
// is usable, and a step is placed exactly when enough nodes have the free
// counts it needs (what the claim's `free` promises the coordinator).
TEST(PlacementTest, RandomSequencesKeepTheInvariants) {
  const std::vector<std::shared_ptr<const Topology>> shapes = {
      Synthetic("pack:2 numa:2 core:4 pu:2"),
      *Topology::FromXmlBuffer(SyntheticXml("pack:2 core:4 pu:2", {0, 1, 2, 5, 6, 7, 8, 9, 12, 15})),
      *Topology::FromXmlBuffer(GpuMachineXml(2, 3, 2, {0, 1, 1}, true)),
      *Topology::FromXmlBuffer(SyntheticXml("core:6 pu:2", {}, {{0, 1, 2, 3}, {4, 5, 6, 7, 8, 9, 10, 11}})),
  };
  std::mt19937 rng(20261129);  // NOLINT(cert-msc32-c,cert-msc51-cpp): a fixed seed replays the same sequences
  for (const auto& t : shapes) {
    auto placer = MakePlacer({{"n1", t}, {"n2", t}, {"n3", t}});
    std::map<uint64_t, Placement> held;
    for (int i = 0; i < 400; ++i) {
      if (!held.empty() && rng() % 3 == 0) {
        auto it = std::next(held.begin(), static_cast<long>(rng() % held.size()));
        ASSERT_TRUE(placer->Release(it->first).ok());
        held.erase(it);
        continue;
      }
      StepResources s = Step(1 + static_cast<int>(rng() % 2), 1 + static_cast<int>(rng() % 3),
                             1 + static_cast<int>(rng() % 4), static_cast<int>(rng() % 4 == 0));
      const auto before = placer->Free();
      const int need_cpus = s.ranks_per_node * s.cpus_per_rank, need_gpus = s.ranks_per_node * s.gpus_per_rank;
      const int fitting = static_cast<int>(std::count_if(before.begin(), before.end(), [&](const NodeFree& n) {
        return n.cpus >= need_cpus && n.gpus >= need_gpus;
      }));
      auto p = placer->Place(s);
      ASSERT_EQ(p.ok(), fitting >= s.nodes) << p.status().ToString();
      if (p.ok()) held.emplace(p->id, *p);
      // No PU or GPU in two held placements (or twice in one); all usable.
      std::set<std::pair<std::string, int>> pus, gpus;
      for (const auto& [id, pl] : held) {
        for (const RankPlacement& r : pl.ranks) {
          const std::string& node = pl.nodes[static_cast<size_t>(r.node)].name;
          for (int pu : r.cpus) {
            ASSERT_TRUE(pus.emplace(node, pu).second) << "PU " << pu << " on " << node << " held twice";
            const auto& all = t->pus();
            auto it = std::find_if(all.begin(), all.end(), [&](const Pu& x) { return x.os_index == pu; });
            ASSERT_NE(it, all.end());
            ASSERT_TRUE(it->allowed);
          }
          for (int g : r.gpus) ASSERT_TRUE(gpus.emplace(node, g).second);
        }
      }
      int free_total = 0;
      for (const NodeFree& n : placer->Free()) {
        free_total += n.cpus;
        // Idle cores, recounted from the held PUs.
        int idle = 0;
        for (const Core& core : t->cores()) {
          bool usable = false, busy = false;
          for (int pu : core.pus) {
            const Pu& x = t->pus()[static_cast<size_t>(pu)];
            usable = usable || x.allowed;
            busy = busy || pus.count({n.name, x.os_index}) > 0;
          }
          idle += usable && !busy;
        }
        ASSERT_EQ(n.idle_cores, idle) << n.name;
      }
      ASSERT_EQ(free_total + static_cast<int>(pus.size()), 3 * t->allowed_pu_count());
    }
    for (const auto& [id, pl] : held) ASSERT_TRUE(placer->Release(id).ok());
    EXPECT_EQ(placer->held(), 0u);
  }
}

TEST(PlacementTest, ConcurrentPlaceAndReleaseFromManyThreads) {
  auto t = Synthetic("pack:2 numa:2 core:4 pu:2");
  auto placer = MakePlacer({{"n1", t}, {"n2", t}});
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int w = 0; w < 4; ++w) {
    threads.emplace_back([&placer, w] {
      for (int i = 0; i < 200; ++i) {
        // At most 4 x 3 CPUs are held at once out of 64: every placement fits.
        auto p = placer->Place(Step(1, 1, 1 + (i + w) % 3));
        EXPECT_TRUE(p.ok()) << p.status().ToString();
        if (p.ok()) {
          EXPECT_TRUE(placer->Release(p->id).ok());
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(placer->held(), 0u);
  for (const NodeFree& n : placer->Free()) EXPECT_EQ(n.cpus, 32);
}

}  // namespace
}  // namespace scimesh::launcher

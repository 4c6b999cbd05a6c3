// Unit tests for Topology: synthetic shapes, XML round trips, allowed sets,
// CPU kinds, GPUs, and the real machines in ../shared/topologies.
#include "launcher/placement/topology.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "tests/launcher/topology_test_util.h"

namespace scimesh::launcher {
namespace {

using testing::GpuMachineXml;
using testing::HaveTopologyDir;
using testing::RawHwloc;
using testing::RealTopology;
using testing::Synthetic;
using testing::SyntheticXml;

#define SKIP_WITHOUT_REAL_TOPOLOGIES()                                                                  \
  if (!HaveTopologyDir()) GTEST_SKIP() << "real topologies not found at " << testing::TopologyDir() \
                                       << " (../shared is absent in this checkout)"

TEST(TopologyTest, SyntheticShape) {
  auto t = Synthetic("pack:2 numa:2 core:4 pu:2");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->pus().size(), 32u);
  EXPECT_EQ(t->cores().size(), 16u);
  EXPECT_EQ(t->allowed_pu_count(), 32);
  for (const Core& c : t->cores()) {
    EXPECT_EQ(c.pus.size(), 2u);
    EXPECT_EQ(c.numa.size(), 1u);
  }
  // Cores 0-3 share NUMA node 0 and package 0; cores 4-7 NUMA node 1.
  EXPECT_EQ(t->cores()[3].numa, std::vector<int>{0});
  EXPECT_EQ(t->cores()[4].numa, std::vector<int>{1});
  EXPECT_EQ(t->cores()[7].package, 0);
  EXPECT_EQ(t->cores()[8].package, 1);
  // Root -> 2 packages -> 2 NUMA groups each -> 4 cores each.
  const Domain& root = t->domains()[0];
  ASSERT_EQ(root.children.size(), 2u);
  const Domain& pkg = t->domains()[static_cast<size_t>(root.children[1])];
  EXPECT_EQ(pkg.cores, (std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15}));
  ASSERT_EQ(pkg.children.size(), 2u);
  EXPECT_EQ(t->domains()[static_cast<size_t>(pkg.children[0])].children.size(), 4u);
  EXPECT_EQ(t->CorePath(9).front(), 0);
  EXPECT_EQ(t->CorePath(9).size(), 4u);
  EXPECT_EQ(t->Summary(), "2 packages, 4 NUMA nodes, 16 cores, 32 PUs (32 allowed), 0 GPUs, 1 CPU kind");
}

TEST(TopologyTest, BadSourcesFailWithAStatus) {
  EXPECT_EQ(Topology::FromSynthetic("pack:two").status().code(), Code::kInvalidArgument);
  EXPECT_FALSE(Topology::FromXmlBuffer("<not-a-topology/>").ok());
  EXPECT_FALSE(Topology::FromXmlFile("/nonexistent/topology.xml").ok());
}

TEST(TopologyTest, FromSourceNamesSyntheticOrXml) {
  auto synthetic = Topology::FromSource("synthetic:core:32 pu:1");
  ASSERT_TRUE(synthetic.ok()) << synthetic.status().ToString();
  EXPECT_EQ((*synthetic)->pus().size(), 32u);
  EXPECT_EQ(Topology::FromSource("synthetic:pack:two").status().code(), Code::kInvalidArgument);
  EXPECT_FALSE(Topology::FromSource("/nonexistent/topology.xml").ok());  // a path: read as XML
}

TEST(TopologyTest, ThisMachineLoads) {
  // Never destroyed on purpose: destroying the last topology unloads hwloc's
  // PCI plugin, and libpciaccess's global state then shows up as a leak
  // under AddressSanitizer (the asan preset). The launcher keeps its
  // topology for its whole life too.
  static const auto* kept = new Result<std::shared_ptr<const Topology>>(Topology::LoadThisMachine());
  const auto& t = *kept;
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_GE((*t)->allowed_pu_count(), 1);
  EXPECT_FALSE((*t)->cores().empty());
}

TEST(TopologyTest, XmlExportRoundTripKeepsTheModel) {
  auto t = Topology::FromXmlBuffer(SyntheticXml("pack:2 core:3 pu:2", {0, 1, 2, 3, 6, 7}));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  auto xml = (*t)->ExportXml();
  ASSERT_TRUE(xml.ok());
  auto again = Topology::FromXmlBuffer(*xml);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ASSERT_EQ((*again)->pus().size(), (*t)->pus().size());
  for (size_t i = 0; i < (*t)->pus().size(); ++i) {
    EXPECT_EQ((*again)->pus()[i].os_index, (*t)->pus()[i].os_index);
    EXPECT_EQ((*again)->pus()[i].allowed, (*t)->pus()[i].allowed);
  }
  EXPECT_EQ((*again)->allowed_pu_count(), 6);
}

TEST(TopologyTest, RestrictedCpusetKeepsDisallowedPusVisible) {
  auto t = Topology::FromXmlBuffer(SyntheticXml("pack:2 core:2 pu:2", {0, 2, 3, 5}));
  ASSERT_TRUE(t.ok());
  std::vector<int> allowed;
  for (const Pu& p : (*t)->pus()) {
    if (p.allowed) allowed.push_back(p.os_index);
  }
  EXPECT_EQ((*t)->pus().size(), 8u);
  EXPECT_EQ(allowed, (std::vector<int>{0, 2, 3, 5}));
}

TEST(TopologyTest, CpuKindsRankMostPerformantHighestAndFirstInCore) {
  // PUs 0-3 are two little cores' threads, 4-7 two big cores'.
  auto t = Topology::FromXmlBuffer(SyntheticXml("core:4 pu:2", {}, {{0, 1, 2, 3}, {4, 5, 6, 7}}));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)->kind_count(), 2);
  EXPECT_EQ((*t)->pus()[0].kind, 0);
  EXPECT_EQ((*t)->pus()[5].kind, 1);
  // Mixed core (not in this shape) aside, the first PU of a core is its best.
  auto mixed = Topology::FromXmlBuffer(SyntheticXml("core:2 pu:2", {}, {{0, 2}, {1, 3}}));
  ASSERT_TRUE(mixed.ok());
  for (const Core& c : (*mixed)->cores()) {
    EXPECT_EQ((*mixed)->pus()[static_cast<size_t>(c.pus.front())].kind, 1);
  }
}

TEST(TopologyTest, GpusAreComputeDevicesInPciOrderWithTheirLocality) {
  auto t = Topology::FromXmlBuffer(GpuMachineXml(2, 2, 2, {1, 0}, /*with_vga=*/true));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  // The VGA management chip is not a GPU; the two NVML devices are.
  ASSERT_EQ((*t)->gpus().size(), 2u);
  EXPECT_EQ((*t)->gpus()[0].name, "nvml0");
  EXPECT_EQ((*t)->gpus()[0].pci_busid, "0000:10:00.0");
  EXPECT_EQ((*t)->gpus()[0].local_cores, (std::vector<int>{2, 3}));  // package 1
  EXPECT_EQ((*t)->gpus()[1].local_cores, (std::vector<int>{0, 1}));  // package 0
  const Domain& root = (*t)->domains()[0];
  EXPECT_EQ(root.gpus, (std::vector<int>{0, 1}));
  EXPECT_EQ((*t)->domains()[static_cast<size_t>(root.children[0])].gpus, std::vector<int>{1});
}

TEST(TopologyRealTest, DgxTwoHasSixteenNvmlGpusEightPerPackage) {
  SKIP_WITHOUT_REAL_TOPOLOGIES();
  auto t = RealTopology("nvidiaDGX2.xml");
  ASSERT_NE(t, nullptr);
  RawHwloc raw(testing::TopologyDir() + "/nvidiaDGX2.xml");
  ASSERT_EQ(t->gpus().size(), 16u);
  EXPECT_EQ(t->pus().size(), 4u);
  for (const Gpu& g : t->gpus()) {
    // PCI bus order is NVML order on this machine.
    EXPECT_EQ(g.name, "nvml" + std::to_string(g.index));
    EXPECT_EQ(g.model, "Tesla V100-SXM3-32GB-H");
    std::set<int> expected;
    for (int os : raw.LocalityOf(g.name)) {
      for (const Pu& p : t->pus()) {
        if (p.os_index == os) expected.insert(p.core);
      }
    }
    EXPECT_EQ(std::set<int>(g.local_cores.begin(), g.local_cores.end()), expected) << g.name;
  }
}

TEST(TopologyRealTest, GpuDetectionAcrossMachines) {
  SKIP_WITHOUT_REAL_TOPOLOGIES();
  // A management VGA chip with only a DRM node is not a GPU.
  EXPECT_EQ(RealTopology("96em64t-4n4d3ca2co-pci.xml")->gpus().size(), 0u);
  // A CUDA Tesla (with its DRM node) and an OpenCL Radeon.
  auto mixed = RealTopology("32em64t-2n8c2t-pci-normalio.xml");
  ASSERT_EQ(mixed->gpus().size(), 2u);
  EXPECT_EQ(mixed->gpus()[0].name, "cuda0");
  EXPECT_EQ(mixed->gpus()[1].name, "opencl0d1");
  // CUDA + OpenCL + NVML on each of four PCI devices: four GPUs, named by NVML.
  auto power8 = RealTopology("power8gpudistances.xml");
  ASSERT_EQ(power8->gpus().size(), 4u);
  for (const Gpu& g : power8->gpus()) EXPECT_EQ(g.name, "nvml" + std::to_string(g.index));
  EXPECT_EQ(RealTopology("24em64t-2n6c2t-pci.xml")->gpus().size(), 0u);
}

TEST(TopologyRealTest, OfflineAndDisallowedPusAreNotUsable) {
  SKIP_WITHOUT_REAL_TOPOLOGIES();
  for (const std::string file : {"16em64t-4s2c2t-offlines.xml", "16amd64-8n2c-cpusets.xml"}) {
    auto t = RealTopology(file);
    RawHwloc raw(testing::TopologyDir() + "/" + file);
    int allowed = 0;
    for (const Pu& p : t->pus()) {
      EXPECT_TRUE(raw.Online(p.os_index)) << file << " PU " << p.os_index;
      EXPECT_EQ(p.allowed, raw.Allowed(p.os_index)) << file << " PU " << p.os_index;
      allowed += p.allowed;
    }
    EXPECT_EQ(allowed, hwloc_bitmap_weight(hwloc_topology_get_allowed_cpuset(raw.get()))) << file;
    EXPECT_EQ(t->allowed_pu_count(), allowed);
  }
  // The offline machine has cores with one of their two threads offline.
  auto offline = RealTopology("16em64t-4s2c2t-offlines.xml");
  EXPECT_EQ(offline->pus().size(), 7u);
  EXPECT_EQ(offline->cores().size(), 6u);
}

TEST(TopologyRealTest, HeterogeneousKindsAndHybridKnl) {
  SKIP_WITHOUT_REAL_TOPOLOGIES();
  auto kinds = RealTopology("fakecpukinds.xml");
  RawHwloc raw(testing::TopologyDir() + "/fakecpukinds.xml");
  EXPECT_EQ(kinds->kind_count(), 3);
  const std::vector<int> best = raw.BestKind();
  ASSERT_FALSE(best.empty());
  for (const Pu& p : kinds->pus()) {
    const bool is_best = std::find(best.begin(), best.end(), p.os_index) != best.end();
    EXPECT_EQ(p.kind == 2, is_best) << "PU " << p.os_index;
  }
  // KNL SNC4 hybrid: 16 cores of 4 threads; each core near a DDR and an MCDRAM node.
  auto knl = RealTopology("64intel64-fakeKNL-SNC4-hybrid.xml");
  EXPECT_EQ(knl->cores().size(), 16u);
  for (const Core& c : knl->cores()) {
    EXPECT_EQ(c.pus.size(), 4u);
    EXPECT_EQ(c.numa.size(), 2u);
  }
}

}  // namespace
}  // namespace scimesh::launcher

// Unit tests for probing each node's topology: the srun command, splitting
// its labelled output, and placing on two different real machines in one
// allocation (../shared/topologies; skipped where absent).
#include "launcher/allocation/node_probe.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "tests/launcher/topology_test_util.h"

namespace scimesh::launcher {
namespace {

// What srun --label prints for task `task` run on `node` printing `xml`.
std::string Labelled(int task, const std::string& node, const std::string& xml) {
  std::string out = std::to_string(task) + ": node=" + node + "\n";
  std::istringstream lines(xml);
  for (std::string line; std::getline(lines, line);) out += std::to_string(task) + ": " + line + "\n";
  return out;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(NodeProbeTest, OneStepOverTheOtherNodesWithTheirWholeShare) {
  auto argv = ProbeCommand("srun", {"n2", "n3"});
  for (const char* want : {"--nodes=2", "--ntasks=2", "--ntasks-per-node=1", "--nodelist=n2,n3", "--whole",
                           "--overlap", "--label"}) {
    EXPECT_NE(std::find(argv.begin(), argv.end(), want), argv.end()) << want;
  }
  EXPECT_EQ(argv.front(), "srun");
  EXPECT_NE(argv.back().find("lstopo-no-graphics --whole-system --of xml -"), std::string::npos);
}

TEST(NodeProbeTest, SplitsInterleavedTasksByTheNodeEachNamed) {
  std::string out = "0: node=n2\n1: node=n3\n1: <b/>\n0: <a>\n 0: x: y\n0:\n0: </a>\n";
  auto xml = SplitProbeOutput(out);
  ASSERT_TRUE(xml.ok()) << xml.status().ToString();
  ASSERT_EQ(xml->size(), 2u);
  EXPECT_EQ(xml->at("n2"), "<a>\nx: y\n\n</a>\n");
  EXPECT_EQ(xml->at("n3"), "<b/>\n");
}

TEST(NodeProbeTest, RefusesUnlabelledLinesUnnamedTasksAndANodeTwice) {
  EXPECT_EQ(SplitProbeOutput("0: node=n2\n<xml/>\n").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(SplitProbeOutput("0: <xml/>\n").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(SplitProbeOutput("0: node=../n2\n").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(SplitProbeOutput("0: node=n2\n1: node=n2\n").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(SplitProbeOutput("x1: node=n2\n").status().code(), Code::kInvalidArgument);
}

Allocation ThreeNodes() {
  Allocation a;
  a.under_slurm = true;
  a.this_node = "n1";
  a.nodes = {{"n1", -1, 0}, {"n2", -1, 0}, {"n3", -1, 0}};
  return a;
}

TEST(NodeProbeTest, ProbesOnlyTheOtherNodesAndListsTheOnesItCouldNotRead) {
  std::vector<std::string> ran;
  auto xml = testing::SyntheticXml("pack:1 core:6 pu:1", {});
  auto probed = ProbeNodes(ThreeNodes(), "srun", [&](const std::vector<std::string>& argv) -> Result<std::string> {
    ran = argv;
    return Labelled(0, "n2", xml) + "1: node=n3\n1: <not xml\n";
  });
  EXPECT_NE(std::find(ran.begin(), ran.end(), "--nodelist=n2,n3"), ran.end());
  ASSERT_EQ(probed.topologies.count("n2"), 1u);
  EXPECT_EQ(probed.topologies.at("n2")->cores().size(), 6u);
  EXPECT_EQ(probed.topologies.count("n3"), 0u);
  ASSERT_EQ(probed.problems.size(), 1u);
  EXPECT_EQ(probed.problems[0].rfind("n3: its topology does not load", 0), 0u) << probed.problems[0];
}

TEST(NodeProbeTest, AFailedProbeLeavesEveryNodeToTheHomogeneousAssumption) {
  auto probed = ProbeNodes(ThreeNodes(), "srun", [](const std::vector<std::string>&) -> Result<std::string> {
    return Status::Unavailable("srun exited 1: lstopo-no-graphics: command not found");
  });
  EXPECT_TRUE(probed.topologies.empty());
  ASSERT_EQ(probed.problems.size(), 1u);
  EXPECT_NE(probed.problems[0].find("command not found"), std::string::npos);
  Allocation alone;
  alone.this_node = "n1";
  alone.nodes = {{"n1", -1, 0}};
  int runs = 0;
  ProbeNodes(alone, "srun", [&](const std::vector<std::string>&) -> Result<std::string> {
    ++runs;
    return std::string();
  });
  EXPECT_EQ(runs, 0);
}

// Two real machines in one allocation: a 24-PU node and a 384-PU node, with
// the launcher on a third, small one. Each step lands where it fits, on PUs
// its own node has.
TEST(NodeProbeTest, PlacesEachStepOnItsOwnNodesTopology) {
  if (!testing::HaveTopologyDir()) GTEST_SKIP() << "real topologies absent (../shared)";
  const std::string small = testing::TopologyDir() + "/24em64t-2n6c2t-pci.xml";
  const std::string big = testing::TopologyDir() + "/192em64t-24n8c2t.xml";
  auto probed = ProbeNodes(ThreeNodes(), "srun", [&](const std::vector<std::string>&) -> Result<std::string> {
    return Labelled(1, "n3", ReadFile(big)) + Labelled(0, "n2", ReadFile(small));
  });
  ASSERT_TRUE(probed.problems.empty()) << probed.problems[0];
  auto local = testing::Synthetic("pack:1 core:4 pu:1");
  auto placer = Placer::Create(NodeSpecsFor(ThreeNodes(), local, probed.topologies));
  ASSERT_TRUE(placer.ok()) << placer.status().ToString();
  auto free = (*placer)->Free();
  EXPECT_EQ(free[0].cpus, 4);
  EXPECT_EQ(free[1].cpus, 24);
  EXPECT_EQ(free[2].cpus, 384);

  StepResources wide;  // 64 ranks on one node: only n3 has the room
  wide.ranks_per_node = 64;
  auto p = (*placer)->Place(wide);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_EQ(p->nodes.size(), 1u);
  EXPECT_EQ(p->nodes[0].name, "n3");
  testing::RawHwloc raw_big(big);
  std::set<int> used;
  for (const auto& r : p->ranks) {
    for (int cpu : r.cpus) {
      EXPECT_TRUE(raw_big.Allowed(cpu) && raw_big.Online(cpu)) << "PU " << cpu << " is not n3's";
      EXPECT_TRUE(used.insert(cpu).second) << "PU " << cpu << " twice";
    }
  }
  // 2 nodes x 12 ranks: n2 and n3 (n1 has 4 PUs); on n2 only PUs n2 has.
  StepResources pair;
  pair.nodes = 2;
  pair.ranks_per_node = 12;
  auto q = (*placer)->Place(pair);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  ASSERT_EQ(q->nodes.size(), 2u);
  EXPECT_EQ(q->nodes[0].name, "n2");
  EXPECT_EQ(q->nodes[1].name, "n3");
  testing::RawHwloc raw_small(small);
  for (int cpu : q->nodes[0].cpus) EXPECT_TRUE(raw_small.Online(cpu)) << "PU " << cpu << " is not n2's";
  EXPECT_EQ(q->nodes[0].cpus.size(), 12u);
}

}  // namespace
}  // namespace scimesh::launcher

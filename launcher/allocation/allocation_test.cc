// Unit tests for allocation discovery from a fake environment, the squeue
// end-time query against a fake squeue, and node specs for the placer.
#include "launcher/allocation/allocation.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>

#include "tests/launcher/topology_test_util.h"

namespace scimesh::launcher {
namespace {

Environment Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

AllocationOptions Host(std::string name) {
  AllocationOptions o;
  o.hostname = std::move(name);
  return o;
}

TEST(AllocationTest, OutsideSlurmIsThisHostWithNoEnd) {
  auto a = AllocationFromEnvironment(Env({}), Host("laptop"));
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(a->under_slurm);
  ASSERT_EQ(a->nodes.size(), 1u);
  EXPECT_EQ(a->nodes[0].name, "laptop");
  EXPECT_EQ(a->nodes[0].cpus, -1);
  EXPECT_FALSE(TimeLeft(*a, std::chrono::system_clock::now()).has_value());
}

TEST(AllocationTest, WalltimeFlagSetsTheEnd) {
  AllocationOptions o = Host("laptop");
  o.walltime = std::chrono::seconds(3600);
  auto a = AllocationFromEnvironment(Env({}), o);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*TimeLeft(*a, o.now + std::chrono::seconds(600)), std::chrono::seconds(3000));
  EXPECT_EQ(*TimeLeft(*a, o.now + std::chrono::seconds(7200)), std::chrono::seconds(0));
}

TEST(AllocationTest, ReadsASlurmJob) {
  auto a = AllocationFromEnvironment(Env({{"SLURM_JOB_ID", "4242"},
                                          {"SLURM_JOB_NODELIST", "n[1-3],gpu01"},
                                          {"SLURM_JOB_CPUS_PER_NODE", "8(x3),4"},
                                          {"SLURMD_NODENAME", "n2"},
                                          {"SLURM_JOB_GPUS", "0,2"},
                                          {"SLURM_GPUS_PER_NODE", "a100:1"}}),
                                     Host("ignored"));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_TRUE(a->under_slurm);
  EXPECT_EQ(a->job_id, "4242");
  EXPECT_EQ(a->this_node, "n2");
  ASSERT_EQ(a->nodes.size(), 4u);
  EXPECT_EQ(a->nodes[3].name, "gpu01");
  EXPECT_EQ(a->nodes[3].cpus, 4);
  EXPECT_EQ(a->nodes[1].gpus, 2);  // this node: SLURM_JOB_GPUS
  EXPECT_EQ(a->nodes[0].gpus, 1);  // others: SLURM_GPUS_PER_NODE
  EXPECT_EQ(a->this_node_gpu_ids, (std::vector<int>{0, 2}));
  EXPECT_FALSE(a->end.has_value());
}

TEST(AllocationTest, OtherNodesGetThisNodesGpuCountWithoutAPerNodeRequest) {
  auto a = AllocationFromEnvironment(Env({{"SLURM_JOBID", "7"},
                                          {"SLURM_NODELIST", "n[1-2]"},
                                          {"SLURMD_NODENAME", "n1"},
                                          {"SLURM_GPUS_ON_NODE", "4"}}),
                                     Host("n1"));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->nodes[1].gpus, 4);
  EXPECT_EQ(a->nodes[1].cpus, -1);
  auto none = AllocationFromEnvironment(Env({{"SLURM_JOB_ID", "7"}, {"SLURM_JOB_NODELIST", "n1"}}), Host("n1"));
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->nodes[0].gpus, 0) << "under SLURM, no GPU variable means no GPU";
}

TEST(AllocationTest, BadVariablesAreNamed) {
  auto with = [](const std::map<std::string, std::string>& extra) {
    std::map<std::string, std::string> vars{{"SLURM_JOB_ID", "9"}, {"SLURM_JOB_NODELIST", "n[1-2]"},
                                            {"SLURMD_NODENAME", "n1"}};
    for (auto& [k, v] : extra) vars[k] = v;
    return AllocationFromEnvironment(Env(vars), Host("n1")).status();
  };
  EXPECT_EQ(with({{"SLURM_JOB_NODELIST", "n[1-2"}}).message(),
            "SLURM_JOB_NODELIST: unbalanced '[' in host list 'n[1-2'");
  EXPECT_EQ(with({{"SLURM_JOB_CPUS_PER_NODE", "4(x3)"}}).message(),
            "SLURM_JOB_CPUS_PER_NODE: cpus-per-node '4(x3)' names more than the 2 nodes of the node list");
  EXPECT_EQ(with({{"SLURM_JOB_GPUS", "0,,1"}}).code(), Code::kInvalidArgument);
  EXPECT_EQ(with({{"SLURM_GPUS_ON_NODE", "many"}}).code(), Code::kInvalidArgument);
  EXPECT_EQ(with({{"SLURMD_NODENAME", "n9"}}).message(), "this node 'n9' is not in SLURM_JOB_NODELIST 'n[1-2]'");
  EXPECT_EQ(with({{"SLURM_JOB_ID", "x"}}).message(), "SLURM_JOB_ID: 'x' is not a job id");
  EXPECT_EQ(AllocationFromEnvironment(Env({{"SLURM_JOB_ID", "9"}}), Host("n1")).status().message(),
            "SLURM_JOB_ID is set but SLURM_JOB_NODELIST is not");
}

// A fake squeue in a temporary directory: prints `output` and exits `rc`
// when called as `squeue -h -j 4242 -o %e`, and fails otherwise.
class FakeSqueue {
 public:
  FakeSqueue(const std::string& output, int rc) {
    char dir[] = "/tmp/scimesh-squeue-XXXXXX";
    dir_ = mkdtemp(dir);
    path_ = dir_ + "/squeue";
    std::ofstream(path_) << "#!/bin/sh\n"
                         << "[ \"$*\" = \"-h -j 4242 -o %e\" ] || { echo \"bad args: $*\" >&2; exit 3; }\n"
                         << "printf '%s\\n' '" << output << "'\nexit " << rc << "\n";
    chmod(path_.c_str(), 0700);
  }
  ~FakeSqueue() {
    unlink(path_.c_str());
    rmdir(dir_.c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string dir_, path_;
};

TEST(SqueueEndTest, ParsesTheEndTimeSqueuePrints) {
  setenv("TZ", "UTC", 1);
  tzset();
  FakeSqueue squeue("2026-11-29T08:00:30", 0);
  auto end = QuerySlurmJobEnd("4242", std::chrono::seconds(5), squeue.path());
  ASSERT_TRUE(end.ok()) << end.status().ToString();
  EXPECT_EQ(std::chrono::system_clock::to_time_t(*end), 1795939230);
  unsetenv("TZ");
  tzset();
}

TEST(SqueueEndTest, FailuresAreStatuses) {
  FakeSqueue unknown("Unknown", 0);
  EXPECT_EQ(QuerySlurmJobEnd("4242", std::chrono::seconds(5), unknown.path()).status().code(),
            Code::kInvalidArgument);
  FakeSqueue failing("slurm_load_jobs error: Invalid job id specified", 1);
  EXPECT_EQ(QuerySlurmJobEnd("4242", std::chrono::seconds(5), failing.path()).status().code(), Code::kUnavailable);
  FakeSqueue empty("", 0);
  EXPECT_EQ(QuerySlurmJobEnd("4242", std::chrono::seconds(5), empty.path()).status().code(), Code::kNotFound);
  EXPECT_EQ(QuerySlurmJobEnd("4243", std::chrono::seconds(5), empty.path()).status().code(), Code::kUnavailable);
}

TEST(NodeSpecsTest, ThisNodeUsesItsOwnViewOthersProbedOrAssumedAlike) {
  auto local = *Topology::FromXmlBuffer(testing::SyntheticXml("pack:1 core:4 pu:2", {0, 1, 2, 3}));
  auto probed = testing::Synthetic("pack:2 core:4 pu:1");
  Allocation a;
  a.under_slurm = true;
  a.this_node = "n1";
  a.nodes = {{"n1", 4, 0}, {"n2", 6, 0}, {"n3", 8, 0}};
  auto specs = NodeSpecsFor(a, local, {{"n3", probed}});
  ASSERT_EQ(specs.size(), 3u);
  auto placer = Placer::Create(specs);
  ASSERT_TRUE(placer.ok());
  auto free = (*placer)->Free();
  EXPECT_EQ(free[0].cpus, 4);  // the allowed set: 4 PUs
  EXPECT_EQ(free[1].cpus, 6);  // like n1, every PU, limited to SLURM's 6
  EXPECT_EQ(free[1].idle_cores, 3);
  EXPECT_EQ(free[2].cpus, 8);  // its own probed topology
}

TEST(NodeSpecsTest, SlurmGpuIdsHwlocCannotSeeFallBackToACount) {
  auto local = *Topology::FromXmlBuffer(testing::GpuMachineXml(1, 2, 1, {0, 0}, false));
  Allocation a;
  a.this_node = "n1";
  a.nodes = {{"n1", -1, 2}};
  a.this_node_gpu_ids = std::vector<int>{2, 3};  // hwloc renumbered them 0, 1 under the device cgroup
  auto placer = Placer::Create(NodeSpecsFor(a, local));
  ASSERT_TRUE(placer.ok()) << placer.status().ToString();
  EXPECT_EQ((*placer)->Free()[0].gpus, 2);
}

}  // namespace
}  // namespace scimesh::launcher

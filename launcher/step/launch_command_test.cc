// Unit tests for the srun / mpirun / direct command lines.
#include "launcher/step/launch_command.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace scimesh::launcher {
namespace {

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

Placement TwoNodes() {
  Placement p;
  p.nodes = {{"n1", 2, {0, 1}, {}}, {"n2", 2, {0, 1}, {}}};
  for (int r = 0; r < 4; ++r) p.ranks.push_back({r, r / 2, {r % 2}, {}, {0}});
  return p;
}

Lease SolveLease() {
  Lease l;
  l.lease_id = "l_1";
  l.step_id = "solve-32";
  l.resources = {2, 2, 1, 0};
  l.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  l.span_id = "00f067aa0ba902b7";
  return l;
}

TEST(LaunchCommandTest, SlurmUsesExactStepsOnThePlacedNodes) {
  LaunchContext ctx;
  ctx.backend = Backend::kSlurm;
  ctx.attempt_dir = "/spool/r/solve-32/1";
  ctx.rank_wrapper = "/opt/scimesh/bin/scimesh-rank";
  ctx.spank_option = true;
  StepCommand cmd;
  cmd.argv = {"/apps/poisson", "--n", "32"};
  auto plan = BuildLaunch(ctx, cmd, SolveLease(), TwoNodes());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  const auto& a = plan->argv;
  EXPECT_EQ(a.front(), "srun");
  for (const char* want : {"--exact", "--nodes=2", "--nodelist=n1,n2", "--ntasks=4", "--ntasks-per-node=2",
                           "--cpus-per-task=1", "--kill-on-bad-exit=1", "--mpi=pmix",
                           "--scimesh-lease=/spool/r/solve-32/1"}) {
    EXPECT_TRUE(Has(a, want)) << want;
  }
  // The wrapper comes right before "--" and the program, in order.
  auto w = std::find(a.begin(), a.end(), "/opt/scimesh/bin/scimesh-rank");
  ASSERT_NE(w, a.end());
  EXPECT_EQ(std::vector<std::string>(w, a.end()),
            (std::vector<std::string>{"/opt/scimesh/bin/scimesh-rank", "--", "/apps/poisson", "--n", "32"}));
  EXPECT_EQ(plan->env.at("SCIMESH_ATTEMPT_DIR"), "/spool/r/solve-32/1");
}

TEST(LaunchCommandTest, NativeProgramsAreNotWrappedAndShellIsExplicit) {
  LaunchContext ctx;
  ctx.backend = Backend::kSlurm;
  StepCommand cmd;
  cmd.argv = {"/apps/poisson"};
  cmd.native = true;
  auto plan = BuildLaunch(ctx, cmd, SolveLease(), TwoNodes());
  ASSERT_TRUE(plan.ok());
  EXPECT_FALSE(Has(plan->argv, "scimesh-rank"));
  EXPECT_FALSE(Has(plan->argv, "--scimesh-lease=" + ctx.attempt_dir));
  EXPECT_EQ(plan->argv.back(), "/apps/poisson");

  cmd.shell = true;
  cmd.argv = {"echo hi > out.txt"};
  plan = BuildLaunch(ctx, cmd, SolveLease(), TwoNodes());
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(std::vector<std::string>(plan->argv.end() - 3, plan->argv.end()),
            (std::vector<std::string>{"/bin/sh", "-c", "echo hi > out.txt"}));
}

TEST(LaunchCommandTest, LocalOneRankRunsTheProgramDirectly) {
  // No scimesh-rank: the plan binds the program, sets its rank environment
  // (a user's own OpenMP setting wins, GPU visibility never) and keeps the
  // key from it.
  LaunchContext ctx;
  ctx.rank_wrapper = "scimesh-rank";
  ctx.inherits = [](const std::string& name) { return name == "OMP_PROC_BIND"; };
  Placement p;
  p.nodes = {{"host", 1, {3, 4}, {1}}};
  p.ranks = {{0, 0, {3, 4}, {1}, {0}}};
  Lease l = SolveLease();
  l.resources = {1, 1, 2, 1};
  StepCommand cmd;
  cmd.argv = {"true"};
  cmd.env = {{"OMP_NUM_THREADS", "8"}, {"CUDA_VISIBLE_DEVICES", "0,1,2"}};
  auto plan = BuildLaunch(ctx, cmd, l, p);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->argv, (std::vector<std::string>{"true"}));
  EXPECT_EQ(plan->pin, (std::vector<int>{3, 4}));
  EXPECT_TRUE(plan->keyless);
  EXPECT_EQ(plan->env.at("OMP_NUM_THREADS"), "8");
  EXPECT_EQ(plan->env.at("OMP_PLACES"), "{3},{4}");
  EXPECT_EQ(plan->env.count("OMP_PROC_BIND"), 0u);  // inherited: left as it is
  EXPECT_EQ(plan->env.at("CUDA_VISIBLE_DEVICES"), "1");

  // A native program takes the lease over and pins itself: it needs the key.
  cmd.native = true;
  plan = BuildLaunch(ctx, cmd, l, p);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->argv, (std::vector<std::string>{"true"}));
  EXPECT_FALSE(plan->keyless);
  EXPECT_TRUE(plan->pin.empty());
}

TEST(LaunchCommandTest, LocalMultiRankUsesMpirunWithoutItsBinding) {
  LaunchContext ctx;
  ctx.env["SCIMESH_WORKER_ID"] = "w";
  StepCommand cmd;
  cmd.argv = {"a.out"};
  auto plan = BuildLaunch(ctx, cmd, SolveLease(), TwoNodes());
  ASSERT_TRUE(plan.ok());
  const auto& a = plan->argv;
  EXPECT_EQ(a[0], "mpirun");
  EXPECT_EQ(a[1], "-np");
  EXPECT_EQ(a[2], "4");
  EXPECT_TRUE(Has(a, "none"));  // --bind-to none: ranks pin themselves
  EXPECT_TRUE(Has(a, "SCIMESH_ATTEMPT_DIR"));
  EXPECT_TRUE(Has(a, "SCIMESH_WORKER_ID"));
  EXPECT_TRUE(Has(a, "TRACEPARENT"));  // -x: every rank of mpirun gets it
  EXPECT_EQ(plan->env.at("TRACEPARENT"), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
}

TEST(LaunchCommandTest, RefusesEmptyInputs) {
  LaunchContext ctx;
  StepCommand empty;
  EXPECT_FALSE(BuildLaunch(ctx, empty, SolveLease(), TwoNodes()).ok());
  StepCommand cmd;
  cmd.argv = {"x"};
  EXPECT_FALSE(BuildLaunch(ctx, cmd, SolveLease(), Placement{}).ok());
}

}  // namespace
}  // namespace scimesh::launcher

// Unit tests for the command lines of a step's setup and finish.
#include "launcher/step/step_part.h"

#include <gtest/gtest.h>

namespace scimesh::launcher {
namespace {

Placement TwoNodes() {
  Placement p;
  p.nodes = {{"n7", 2, {0, 1}, {}}, {"n8", 2, {0, 1}, {}}};
  for (int r = 0; r < 4; ++r) p.ranks.push_back({r, r / 2, {r % 2}, {}, {0}});
  return p;
}

Lease SolveLease() {
  Lease l;
  l.lease_id = "l_1";
  l.step_id = "solve";
  l.resources = {2, 2, 3, 0};
  return l;
}

StepCommand WithParts() {
  StepCommand c;
  c.argv = {"/apps/solver"};
  c.env = {{"CASE", "cavity"}, {"SHARED", "from-run"}};
  c.setup = StepPartCommand{{"/apps/mesh", "--decompose", "4"}, {{"SHARED", "from-setup"}}, false};
  c.finish = StepPartCommand{{"reconstruct > merged.txt"}, {}, true};
  return c;
}

TEST(StepPartTest, SlurmRunsOneTaskOnTheFirstNodeWithoutMpi) {
  LaunchContext ctx;
  ctx.backend = Backend::kSlurm;
  ctx.attempt_dir = "/spool/r/solve/1";
  ctx.spank_option = true;
  auto plan = BuildPartLaunch(ctx, WithParts(), StepPart::kSetup, SolveLease(), TwoNodes(), {});
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->argv, (std::vector<std::string>{"srun", "--exact", "--overlap", "--nodes=1", "--ntasks=1",
                                                  "--nodelist=n7", "--cpus-per-task=3", "--mpi=none",
                                                  "--job-name=solve.setup", "--quiet", "/apps/mesh", "--decompose",
                                                  "4"}));
}

TEST(StepPartTest, EnvironmentIsTheStepsWithThePartsOwnAndExtraOnTop) {
  LaunchContext ctx;
  ctx.attempt_dir = "/spool/r/solve/1";
  ctx.env = {{"SCIMESH_SPOOL", "/spool"}};
  auto plan = BuildPartLaunch(ctx, WithParts(), StepPart::kSetup, SolveLease(), TwoNodes(),
                              {{"SCIMESH_LAUNCH_EXIT", "3"}});
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->env.at("CASE"), "cavity");
  EXPECT_EQ(plan->env.at("SHARED"), "from-setup");
  EXPECT_EQ(plan->env.at("SCIMESH_ATTEMPT_DIR"), "/spool/r/solve/1");
  EXPECT_EQ(plan->env.at("SCIMESH_SPOOL"), "/spool");
  EXPECT_EQ(plan->env.at("SCIMESH_LAUNCH_EXIT"), "3");
}

TEST(StepPartTest, LocalRunsTheProgramItselfThroughAShellOnlyWhenAsked) {
  LaunchContext ctx;
  auto finish = BuildPartLaunch(ctx, WithParts(), StepPart::kFinish, SolveLease(), TwoNodes(), {});
  ASSERT_TRUE(finish.ok());
  EXPECT_EQ(finish->argv, (std::vector<std::string>{"/bin/sh", "-c", "reconstruct > merged.txt"}));
  auto setup = BuildPartLaunch(ctx, WithParts(), StepPart::kSetup, SolveLease(), TwoNodes(), {});
  ASSERT_TRUE(setup.ok());
  EXPECT_EQ(setup->argv, (std::vector<std::string>{"/apps/mesh", "--decompose", "4"}));
}

TEST(StepPartTest, AMissingPartOrPlacementIsAnError) {
  StepCommand plain;
  plain.argv = {"x"};
  EXPECT_FALSE(BuildPartLaunch({}, plain, StepPart::kSetup, SolveLease(), TwoNodes(), {}).ok());
  EXPECT_FALSE(BuildPartLaunch({}, WithParts(), StepPart::kSetup, SolveLease(), Placement{}, {}).ok());
}

TEST(StepPartTest, LaunchExitIsWhatAShellWouldSay) {
  EXPECT_EQ(ShellExitStatus({false, 0}), "0");
  EXPECT_EQ(ShellExitStatus({false, 7}), "7");
  EXPECT_EQ(ShellExitStatus({true, 9}), "137");
}

}  // namespace
}  // namespace scimesh::launcher

// Unit tests for the launcher's definitions file.
#include "launcher/definitions/step_commands.h"

#include <gtest/gtest.h>

namespace scimesh::launcher {
namespace {

constexpr char kFile[] = R"({"workflows":[{"workflow":"mesh-study","version":"1","steps":[
  {"id":"solve","resources":{"nodes":2,"ranks_per_node":2},"walltime_s":600,
   "run":{"argv":["bin/poisson","--quiet"],"env":{"OMP_SCHEDULE":"static"},"native":true}},
  {"id":"report","needs":["solve"],"run":{"argv":["python3 report.py > table.txt"],"shell":true,"mpi":"none"}}]}]})";

TEST(StepCommandsTest, ParsesDefinitionsAndCommands) {
  auto c = StepCommands::Parse(kFile, "/site/mesh");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->definitions().size(), 1u);
  const auto& wf = c->definitions()[0];
  EXPECT_EQ(wf.workflow, "mesh-study");
  ASSERT_EQ(wf.steps.size(), 2u);
  EXPECT_EQ(wf.steps[0].resources->nodes, 2);
  EXPECT_EQ(wf.steps[1].needs, std::vector<std::string>{"solve"});

  const StepCommand* solve = c->Find("mesh-study", "1", "solve");
  ASSERT_NE(solve, nullptr);
  EXPECT_EQ(solve->argv, (std::vector<std::string>{"/site/mesh/bin/poisson", "--quiet"}));
  EXPECT_TRUE(solve->native);
  EXPECT_EQ(solve->env.at("OMP_SCHEDULE"), "static");
  const StepCommand* report = c->Find("mesh-study", "1", "report");
  ASSERT_NE(report, nullptr);
  EXPECT_TRUE(report->shell);
  EXPECT_EQ(report->mpi, "none");
  EXPECT_EQ(report->argv.front(), "python3 report.py > table.txt");  // shell text is not a path
}

TEST(StepCommandsTest, SetupAndFinishAreParsedWithTheirPathsResolved) {
  auto c = StepCommands::Parse(
      R"({"workflow":"w","version":"1","steps":[{"id":"a","run":{"argv":["solver"],)"
      R"("setup":{"argv":["bin/mesh","-n","4"],"env":{"K":"v"}},"finish":{"argv":["tar czf out.tgz case"],"shell":true}}}]})",
      "/site");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const StepCommand* a = c->Find("w", "1", "a");
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(a->setup.has_value());
  EXPECT_EQ(a->setup->argv, (std::vector<std::string>{"/site/bin/mesh", "-n", "4"}));
  EXPECT_EQ(a->setup->env.at("K"), "v");
  ASSERT_TRUE(a->finish.has_value());
  EXPECT_TRUE(a->finish->shell);
  EXPECT_EQ(a->finish->argv.front(), "tar czf out.tgz case");

  auto empty = StepCommands::Parse(
      R"({"workflow":"w","version":"1","steps":[{"id":"a","run":{"argv":["x"],"finish":{"argv":[]}}}]})", "/x");
  EXPECT_EQ(empty.status().message(), "definitions file: steps[0].run.finish.argv: must be a non-empty array of strings");
}

TEST(StepCommandsTest, UnknownStepIsNotHeld) {
  auto c = StepCommands::Parse(kFile, "/x");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->Find("mesh-study", "2", "solve"), nullptr);
  EXPECT_EQ(c->Find("mesh-study", "1", "other"), nullptr);
}

TEST(StepCommandsTest, ASingleWorkflowObjectIsAccepted) {
  auto c = StepCommands::Parse(R"({"workflow":"w","version":"1","steps":[{"id":"a","run":{"argv":["true"]}}]})", "/x");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const StepCommand* a = c->Find("w", "1", "a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->argv.front(), "true");  // looked up in PATH, not made relative
}

TEST(StepCommandsTest, BadFilesGiveErrorsThatNameTheField) {
  auto no_run = StepCommands::Parse(R"({"workflow":"w","version":"1","steps":[{"id":"a"}]})", "/x");
  EXPECT_EQ(no_run.status().code(), Code::kInvalidArgument);
  EXPECT_NE(no_run.status().message().find("steps[0]"), std::string::npos) << no_run.status().message();

  auto empty_argv = StepCommands::Parse(R"({"workflow":"w","version":"1","steps":[{"id":"a","run":{"argv":[]}}]})", "/x");
  EXPECT_NE(empty_argv.status().message().find("run.argv"), std::string::npos);

  // A total `ranks` is refused, not read as 1 rank per node.
  auto total_ranks = StepCommands::Parse(
      R"({"workflow":"w","version":"1","steps":[{"id":"a","resources":{"nodes":2,"ranks":6},"run":{"argv":["x"]}}]})",
      "/x");
  EXPECT_EQ(total_ranks.status().code(), Code::kInvalidArgument);
  EXPECT_NE(total_ranks.status().message().find("resources.ranks"), std::string::npos)
      << total_ranks.status().message();

  // The protocol's own rules still apply (a field of the wrong type).
  auto wrong_type = StepCommands::Parse(
      R"({"workflow":"w","version":"1","steps":[{"id":"a","walltime_s":"long","run":{"argv":["x"]}}]})", "/x");
  EXPECT_EQ(wrong_type.status().code(), Code::kInvalidArgument);
  EXPECT_NE(wrong_type.status().message().find("walltime_s"), std::string::npos) << wrong_type.status().message();
  EXPECT_FALSE(StepCommands::Parse("not json", "/x").ok());

  // One workflow object: paths start at its own fields, as the file has them.
  EXPECT_EQ(wrong_type.status().message().rfind("definitions file: steps[0].walltime_s", 0), 0u)
      << wrong_type.status().message();
}

}  // namespace
}  // namespace scimesh::launcher

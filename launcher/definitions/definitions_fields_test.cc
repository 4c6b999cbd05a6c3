// Unit tests for the definitions file's field check: the typos users made.
#include "launcher/definitions/definitions_fields.h"

#include <gtest/gtest.h>

#include "launcher/definitions/step_commands.h"

namespace scimesh::launcher {
namespace {

// A two-step workflow with `patch` spliced into the second step's object.
std::string WithSecondStep(const std::string& patch) {
  return R"({"workflows":[{"workflow":"w","version":"1","steps":[{"id":"a","run":{"argv":["x"]}},)"
         R"({"id":"b",)" + patch + "}]}]}";
}

std::string ErrorOf(const std::string& file) {
  auto c = StepCommands::Parse(file, "/x");
  EXPECT_FALSE(c.ok()) << file;
  EXPECT_EQ(c.status().code(), Code::kInvalidArgument);
  return c.status().message();
}

TEST(DefinitionsFieldsTest, ResourcesTypoIsRefusedWithSuggestion) {
  EXPECT_EQ(ErrorOf(WithSecondStep(R"("resources":{"nodes":2,"ranks_per_nodes":2},"run":{"argv":["x"]})")),
            "definitions file: workflows[0].steps[1].resources.ranks_per_nodes: unknown field; "
            "did you mean 'ranks_per_node'?");
}

TEST(DefinitionsFieldsTest, RunTypoIsRefusedWithSuggestion) {
  EXPECT_EQ(ErrorOf(WithSecondStep(R"("run":{"argv":["x"],"nativ":true})")),
            "definitions file: workflows[0].steps[1].run.nativ: unknown field; did you mean 'native'?");
}

TEST(DefinitionsFieldsTest, StepTyposAreRefusedWithSuggestion) {
  EXPECT_EQ(ErrorOf(WithSecondStep(R"("walltime":600,"run":{"argv":["x"]})")),
            "definitions file: workflows[0].steps[1].walltime: unknown field; did you mean 'walltime_s'?");
  EXPECT_EQ(ErrorOf(WithSecondStep(R"("resource":{"nodes":2},"run":{"argv":["x"]})")),
            "definitions file: workflows[0].steps[1].resource: unknown field; did you mean 'resources'?");
}

TEST(DefinitionsFieldsTest, SetupAndFinishFieldsAreChecked) {
  EXPECT_EQ(ErrorOf(WithSecondStep(R"("run":{"argv":["x"],"setup":{"argv":["m"],"native":true}})")),
            "definitions file: workflows[0].steps[1].run.setup.native: unknown field");
  EXPECT_EQ(ErrorOf(WithSecondStep(R"("run":{"argv":["x"],"finish":{"arg":["m"]}})")),
            "definitions file: workflows[0].steps[1].run.finish.arg: unknown field; did you mean 'argv'?");
  EXPECT_EQ(ErrorOf(WithSecondStep(R"("run":{"argv":["x"],"setpu":{"argv":["m"]}})")),
            "definitions file: workflows[0].steps[1].run.setpu: unknown field; did you mean 'setup'?");
}

TEST(DefinitionsFieldsTest, TopLevelAndWorkflowFieldsAreChecked) {
  EXPECT_EQ(ErrorOf(R"({"workflows":[],"worklfows":[]})"),
            "definitions file: worklfows: unknown field; did you mean 'workflows'?");
  EXPECT_EQ(ErrorOf(R"({"workflows":[{"workflow":"w","versoin":"1","steps":[]}]})"),
            "definitions file: workflows[0].versoin: unknown field; did you mean 'version'?");
  // One workflow object at the top: its paths start at the step.
  EXPECT_EQ(ErrorOf(R"({"workflow":"w","version":"1","steps":[{"id":"a","run":{"argv":["x"]},"color":1}]})"),
            "definitions file: steps[0].color: unknown field");
}

TEST(DefinitionsFieldsTest, FreeFormValuesAreNotChecked) {
  auto c = StepCommands::Parse(
      WithSecondStep(R"("input":{"anything":1},"run":{"argv":["x"],"env":{"ANY_NAME":"v"},)"
                     R"("setup":{"argv":["m"],"env":{"OTHER":"1"},"shell":false}})"),
      "/x");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
}

TEST(DefinitionsFieldsTest, InvalidJsonGivesLineAndColumn) {
  EXPECT_EQ(ErrorOf("{\"workflows\": [\n  {\"workflow\": \"w\",\n   \"version\": 1 2\n}]}"),
            // The "2" is column 17.
            "definitions file: invalid JSON at line 3, column 17: Missing a comma or '}' after an object member.");
  EXPECT_EQ(ErrorOf("[1]"), "definitions file: must be a JSON object");
}

TEST(DefinitionsFieldsTest, ClosestNameOnlySuggestsNearNames) {
  EXPECT_EQ(ClosestName("ranks_per_nodes", {"nodes", "ranks_per_node"}), "ranks_per_node");
  EXPECT_EQ(ClosestName("colour", {"nodes", "ranks_per_node"}), "");
  EXPECT_EQ(LineAndColumn("ab\ncd", 4), "line 2, column 2");
  EXPECT_EQ(LineAndColumn("ab", 0), "line 1, column 1");
}

}  // namespace
}  // namespace scimesh::launcher

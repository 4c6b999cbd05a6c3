// Tests of template checking and rendering (docs/protocol.md "Templates").
#include "coordinator/input_template.h"

#include <gtest/gtest.h>

#include "coordinator/json_text.h"

namespace scimesh::coordinator {
namespace {

class TemplateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    input_ = Parse(R"({"n":16,"name":"cube","sizes":[8,16,32],"opts":{"tol":1e-8}})");
    state_ = Parse(R"({"phase":"coarse"})");
    solve_ = Parse(R"({"iterations":41,"l2":0.5})");
    scope_.input = input_.get();
    scope_.state = state_.get();
    scope_.run_id = "r_0123456789abcdef";
    scope_.outputs["solve.16"] = solve_.get();
  }
  static std::unique_ptr<rapidjson::Document> Parse(const std::string& s) {
    auto d = ParseJson(s);
    EXPECT_TRUE(d.ok());
    return std::move(d).value();
  }
  std::string Render(const std::string& tmpl) {
    auto r = RenderTemplate(tmpl, scope_);
    return r.ok() ? *r : "ERROR " + r.status().message();
  }

  std::unique_ptr<rapidjson::Document> input_, state_, solve_;
  TemplateScope scope_;
};

TEST_F(TemplateTest, WholePlaceholderKeepsItsJsonType) {
  EXPECT_EQ(Render(R"({"n":"{{input.n}}","o":"{{input.opts}}","s":"{{input.sizes}}"})"),
            R"({"n":16,"o":{"tol":1e-8},"s":[8,16,32]})");
}

TEST_F(TemplateTest, PlaceholderInsideAStringBecomesText) {
  EXPECT_EQ(Render(R"({"label":"mesh {{input.n}}^3 of {{input.name}}","o":"opts={{input.opts}}"})"),
            R"({"label":"mesh 16^3 of cube","o":"opts={\"tol\":1e-8}"})");
}

TEST_F(TemplateTest, ArrayIndicesRunIdStateAndStepOutputs) {
  EXPECT_EQ(Render(R"(["{{input.sizes.2}}","{{run.id}}","{{run.state.phase}}","{{steps.solve.16.output.iterations}}"])"),
            R"([32,"r_0123456789abcdef","coarse",41])");
  EXPECT_EQ(Render(R"({"all":"{{steps.solve.16.output}}"})"), R"({"all":{"iterations":41,"l2":0.5}})");
}

TEST_F(TemplateTest, NonStringsAndPlainStringsPassThrough) {
  EXPECT_EQ(Render(R"({"a":1,"b":[true,null],"c":"plain"})"), R"({"a":1,"b":[true,null],"c":"plain"})");
}

TEST_F(TemplateTest, MissingPathFailsWithItsName) {
  EXPECT_EQ(Render(R"({"x":"{{input.missing}}"})"), "ERROR input template: 'input.missing' not found");
  EXPECT_EQ(Render(R"({"x":"{{input.sizes.3}}"})"), "ERROR input template: 'input.sizes.3' not found");
  EXPECT_EQ(Render(R"({"x":"{{input.n.deeper}}"})"), "ERROR input template: 'input.n.deeper' not found");
}

TEST(CheckTemplate, AcceptsWellFormedPlaceholders) {
  EXPECT_EQ(CheckTemplate(R"({"a":"{{input.x}}","b":"x {{run.id}} {{run.state.k}}","c":"{{steps.s.1.output.k}}"})",
                          {"s.1"}),
            "");
  EXPECT_EQ(CheckTemplate(R"({"a":"no placeholder","b":[1,2]})", {}), "");
}

TEST(CheckTemplate, RefusesMalformedOrUnknownPlaceholders) {
  EXPECT_NE(CheckTemplate(R"({"a":"{{input.x"})", {}), "");
  EXPECT_NE(CheckTemplate(R"({"a":"{{ input.x }}"})", {}), "");
  EXPECT_NE(CheckTemplate(R"({"a":"{{env.HOME}}"})", {}), "");
  EXPECT_NE(CheckTemplate(R"({"a":"{{input..x}}"})", {}), "");
  EXPECT_NE(CheckTemplate(R"({"a":"{{steps.other.output}}"})", {"s"}), "");
  EXPECT_NE(CheckTemplate(R"({"a":"{{run.idx}}"})", {}), "");
}

}  // namespace
}  // namespace scimesh::coordinator

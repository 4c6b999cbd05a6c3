// Tests of definition reading (a register request's definitions through
// protocol's parser and Normalize): defaults, field rules, the needs DAG.
#include "coordinator/definition.h"

#include <optional>

#include <gtest/gtest.h>

#include "coordinator/requests.h"

namespace scimesh::coordinator {
namespace {

struct Read {
  WorkflowDefinition def;
  std::optional<ApiError> error;
};

// `json` as definitions[0] of a register request.
std::unique_ptr<Read> ReadText(const std::string& json) {
  auto r = std::make_unique<Read>();
  auto reg = ReadRegisterRequest(R"({"worker_id":"w","host":"h","version":"1","concurrency":1,"definitions":[)" +
                                 json + "]}");
  if (reg.ok()) {
    r->def = reg.value().definitions.at(0);
  } else {
    r->error = reg.error();
  }
  return r;
}

std::string Field(const Read& r) { return r.error ? r.error->field : "(none)"; }

TEST(Normalize, FillsDefaults) {
  auto r = ReadText(R"({"workflow":"w","version":"1","steps":[{"id":"a"}]})");
  ASSERT_FALSE(r->error.has_value());
  const StepDefinition& s = r->def.steps[0];
  EXPECT_EQ(s.input_template, "{}");
  EXPECT_EQ(s.resources.nodes, 1);
  EXPECT_EQ(s.resources.gpus_per_rank, 0);
  EXPECT_EQ(s.walltime_s, 3600);
  EXPECT_EQ(s.max_attempts, 3);
  EXPECT_EQ(s.delivery, Delivery::kAtLeastOnce);
  EXPECT_TRUE(s.RetriesOn(FailClass::kRetryable));
  EXPECT_TRUE(s.RetriesOn(FailClass::kNodeFailure));
  EXPECT_FALSE(s.RetriesOn(FailClass::kInvalidOutput));
}

TEST(Normalize, SameContentInAnotherKeyOrderIsTheSameDefinition) {
  auto a = ReadText(R"({"workflow":"w","version":"1","steps":[{"id":"a","input":{"x":1,"y":[2]},"max_attempts":3}]})");
  auto b = ReadText(R"({"steps":[{"input":{"y":[2],"x":1},"id":"a"}],"version":"1","workflow":"w"})");
  EXPECT_EQ(a->def.CanonicalText(), b->def.CanonicalText());
  auto c = ReadText(R"({"workflow":"w","version":"1","steps":[{"id":"a","max_attempts":4}]})");
  EXPECT_NE(a->def.CanonicalText(), c->def.CanonicalText());
}

TEST(Normalize, CanonicalTextReadsBackToTheSameDefinition) {
  auto a = ReadText(R"({"workflow":"w","version":"1","steps":[{"id":"a"},{"id":"b","needs":["a"],
      "resources":{"nodes":2,"gpus_per_rank":1},"delivery":"at_most_once","retry_on":["timeout"]}]})");
  ASSERT_FALSE(a->error.has_value());
  auto back = DefinitionFromCanonicalText(a->def.CanonicalText());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->CanonicalText(), a->def.CanonicalText());
  EXPECT_EQ(back->steps[1].delivery, Delivery::kAtMostOnce);
  EXPECT_EQ(back->steps[1].retry_on, std::vector<FailClass>{FailClass::kTimeout});
}

TEST(Normalize, UnknownNeedNamesTheField) {
  auto r = ReadText(R"({"workflow":"w","version":"1","steps":[{"id":"a"},{"id":"b","needs":["zz"]}]})");
  EXPECT_EQ(Field(*r), "definitions[0].steps[1].needs");
  EXPECT_NE(r->error->message.find("zz"), std::string::npos);
}

TEST(Normalize, CycleIsRefusedWithItsPath) {
  auto r = ReadText(R"({"workflow":"w","version":"1","steps":[
      {"id":"a","needs":["c"]},{"id":"b","needs":["a"]},{"id":"c","needs":["b"]},{"id":"d"}]})");
  ASSERT_TRUE(r->error.has_value());
  EXPECT_EQ(Field(*r), "definitions[0].steps[0].needs");
  EXPECT_NE(r->error->message.find("cycle"), std::string::npos);
  EXPECT_NE(r->error->message.find("a -> c -> b -> a"), std::string::npos)
      << r->error->message;
}

TEST(Normalize, SelfNeedAndRepeatedNeedAreRefused) {
  EXPECT_EQ(Field(*ReadText(R"({"workflow":"w","version":"1","steps":[{"id":"a","needs":["a"]}]})")),
            "definitions[0].steps[0].needs");
  EXPECT_EQ(Field(*ReadText(R"({"workflow":"w","version":"1","steps":[{"id":"a"},{"id":"b","needs":["a","a"]}]})")),
            "definitions[0].steps[1].needs");
}

TEST(Normalize, DiamondIsADag) {
  auto r = ReadText(R"({"workflow":"w","version":"1","steps":[{"id":"d","needs":["b","c"]},
      {"id":"b","needs":["a"]},{"id":"c","needs":["a"]},{"id":"a"}]})");
  EXPECT_FALSE(r->error.has_value()) << Field(*r);
}

TEST(Normalize, RefusesBadFields) {
  EXPECT_EQ(Field(*ReadText(R"({"workflow":"w w","version":"1","steps":[{"id":"a"}]})")), "definitions[0].workflow");
  EXPECT_EQ(Field(*ReadText(R"({"workflow":"w","version":"1","steps":[]})")), "definitions[0].steps");
  EXPECT_EQ(Field(*ReadText(R"({"workflow":"w","version":"1","steps":[{"id":"a"},{"id":"a"}]})")),
            "definitions[0].steps[1].id");
  EXPECT_EQ(Field(*ReadText(R"({"workflow":"w","version":"1","steps":[{"id":"a","walltime_s":0}]})")),
            "definitions[0].steps[0].walltime_s");
  EXPECT_EQ(Field(*ReadText(R"({"workflow":"w","version":"1","steps":[{"id":"a","resources":{"nodes":0}}]})")),
            "definitions[0].steps[0].resources.nodes");
  EXPECT_EQ(Field(*ReadText(R"({"workflow":"w","version":"1","steps":[{"id":"a","delivery":"once"}]})")),
            "definitions[0].steps[0].delivery");
  EXPECT_EQ(Field(*ReadText(R"({"workflow":"w","version":"1","steps":[{"id":"a","retry_on":["fatal"]}]})")),
            "definitions[0].steps[0].retry_on[0]");
  EXPECT_EQ(Field(*ReadText(R"({"workflow":"w","version":"1","steps":[{"id":"a","max_attempts":"3"}]})")),
            "definitions[0].steps[0].max_attempts");
}

TEST(Normalize, TemplateReferencingAStepOutsideNeedsIsRefused) {
  auto r = ReadText(R"({"workflow":"w","version":"1","steps":[{"id":"a"},
      {"id":"b","input":{"x":"{{steps.a.output}}"}}]})");
  EXPECT_EQ(Field(*r), "definitions[0].steps[1].input");
}

}  // namespace
}  // namespace scimesh::coordinator

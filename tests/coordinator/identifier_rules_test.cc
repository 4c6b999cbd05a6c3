// Integration: the coordinator refuses the identifiers the client refuses
// (protocol/identifiers.h, one set of rules for both sides): a step id,
// workflow name or version "." or ".." never reaches a lease, where the
// client would refuse the whole claim.
#include "coordinator_fixture.h"

namespace scimesh::coordinator::testing {
namespace {

using IdentifierRules = CoordinatorTest;

TEST_F(IdentifierRules, DotAndDotDotAreRefusedAsStepIdsWorkflowNamesAndVersions) {
  for (const std::string bad : {".", ".."}) {
    Reply step = w1_->Register("worker-1", Definitions("wf", R"([{"id":")" + bad + R"("}])"));
    EXPECT_EQ(step.status, 400) << bad << ": " << step.Describe();
    EXPECT_EQ(step.Str("field"), "definitions[0].steps[0].id") << step.Describe();
    Reply workflow = w1_->Register("worker-1", Definitions(bad, OneStep()));
    EXPECT_EQ(workflow.status, 400) << bad << ": " << workflow.Describe();
    EXPECT_EQ(workflow.Str("field"), "definitions[0].workflow") << workflow.Describe();
    Reply version = w1_->Register("worker-1", Definitions("wf", OneStep(), bad));
    EXPECT_EQ(version.status, 400) << bad << ": " << version.Describe();
    EXPECT_EQ(version.Str("field"), "definitions[0].version") << version.Describe();
    Reply run = exec_->StartRun(bad);
    EXPECT_EQ(run.status, 400) << bad << ": " << run.Describe();
    EXPECT_EQ(run.Str("field"), "workflow") << run.Describe();
  }
  // A name with dots that is not a path step is fine on both sides.
  RegisterOrDie(*w1_, "worker-1", Definitions("wf.v2", R"([{"id":"a..b"}])", "1.0"));
}

}  // namespace
}  // namespace scimesh::coordinator::testing

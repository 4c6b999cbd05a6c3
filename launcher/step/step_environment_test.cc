// Unit tests for a step's environment and its W3C trace context.
#include "launcher/step/step_environment.h"

#include <gtest/gtest.h>

namespace scimesh::launcher {
namespace {

const std::string kTrace = "4bf92f3577b34da6a3ce929d0e0e4736";
const std::string kSpan = "00f067aa0ba902b7";

Lease TracedLease() {
  Lease l;
  l.lease_id = "l_1";
  l.trace_id = kTrace;
  l.span_id = kSpan;
  return l;
}

TEST(TraceParentTest, IsVersion00SampledFromTheLeaseIds) {
  EXPECT_EQ(TraceParent(kTrace, kSpan), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
}

TEST(TraceParentTest, NoneForIdsATracerWouldReject) {
  const std::string zeros32(32, '0'), zeros16(16, '0');
  for (auto [trace, span] : {std::pair{kTrace.substr(1), kSpan},            // 31 digits
                             std::pair{kTrace + "0", kSpan},                // 33 digits
                             std::pair{kTrace, kSpan.substr(0, 15)},        // 15 digits
                             std::pair{std::string(32, 'A'), kSpan},        // uppercase
                             std::pair{std::string("4bf92f3577b34da6a3ce929d0e0e473g"), kSpan},  // not hex
                             std::pair{kTrace, std::string("00f067aa-ba902b7")},
                             std::pair{zeros32, kSpan},                     // invalid per the spec
                             std::pair{kTrace, zeros16},
                             std::pair{std::string(), std::string()}}) {
    EXPECT_EQ(TraceParent(trace, span), std::nullopt) << trace << " " << span;
  }
}

TEST(StepEnvironmentTest, HoldsSettingsTheStepsOwnAttemptDirAndTraceParent) {
  StepCommand cmd;
  cmd.env = {{"OMP_SCHEDULE", "static"}, {"SCIMESH_WORKER_ID", "from-the-step"}};
  auto env = StepEnvironment({{"SCIMESH_WORKER_ID", "w1"}, {"SCIMESH_URL", "http://127.0.0.1:1"}}, cmd,
                             TracedLease(), "/spool/r/s/1");
  EXPECT_EQ(env.at("OMP_SCHEDULE"), "static");
  EXPECT_EQ(env.at("SCIMESH_WORKER_ID"), "from-the-step");  // run.env is the step author's choice
  EXPECT_EQ(env.at("SCIMESH_URL"), "http://127.0.0.1:1");
  EXPECT_EQ(env.at("SCIMESH_ATTEMPT_DIR"), "/spool/r/s/1");
  EXPECT_EQ(env.at("TRACEPARENT"), "00-" + kTrace + "-" + kSpan + "-01");
}

TEST(StepEnvironmentTest, TheLeasesTraceContextWinsOverTheSteps) {
  StepCommand cmd;
  cmd.env = {{"TRACEPARENT", "00-ffffffffffffffffffffffffffffffff-ffffffffffffffff-01"},
             {"SCIMESH_ATTEMPT_DIR", "/elsewhere"}};
  auto env = StepEnvironment({}, cmd, TracedLease(), "/spool/r/s/1");
  EXPECT_EQ(env.at("TRACEPARENT"), "00-" + kTrace + "-" + kSpan + "-01");
  EXPECT_EQ(env.at("SCIMESH_ATTEMPT_DIR"), "/spool/r/s/1");
}

TEST(StepEnvironmentTest, NoTraceParentWithoutValidIds) {
  Lease l = TracedLease();
  l.trace_id = std::string(32, '0');
  auto env = StepEnvironment({}, StepCommand{}, l, "/spool/r/s/1");
  EXPECT_EQ(env.count("TRACEPARENT"), 0u);
}

}  // namespace
}  // namespace scimesh::launcher

// Unit tests for the timeline built from an events file.
#include "launcher/timeline.h"

#include <gtest/gtest.h>

namespace scimesh::launcher {
namespace {

constexpr char kEvents[] = R"({"t":100.0,"event":"allocation","worker_id":"w","nodes":[{"name":"n1","cpus":2,"gpus":0},{"name":"n2","cpus":2,"gpus":0}]}
{"t":100.0,"event":"claim","offered":2,"max":4}
{"t":100.0,"event":"place","lease_id":"l_a","run_id":"r","step_id":"solve","attempt":1,"nodes":[{"name":"n1","ranks":2,"cpus":[0,1],"gpus":[]},{"name":"n2","ranks":2,"cpus":[0,1],"gpus":[]}]}
{"t":101.0,"event":"start","lease_id":"l_a","run_id":"r","step_id":"solve","attempt":1}
{"t":105.0,"event":"end","lease_id":"l_a","run_id":"r","step_id":"solve","attempt":1,"exit":"exit status 0"}
{"t":105.0,"event":"outcome","lease_id":"l_a","run_id":"r","step_id":"solve","attempt":1,"outcome":"completed","detail":"applied"}
{"t":105.0,"event":"place","lease_id":"l_b","run_id":"r","step_id":"report","attempt":1,"nodes":[{"name":"n1","ranks":1,"cpus":[0],"gpus":[]}]}
{"t":105.0,"event":"start","lease_id":"l_b","run_id":"r","step_id":"report","attempt":1}
{"t":109.0,"event":"end","lease_id":"l_b","run_id":"r","step_id":"report","attempt":1,"exit":"exit status 1"}
{"t":110.0,"event":"outcome","lease_id":"l_b","run_id":"r","step_id":"report","attempt":1,"outcome":"failed","detail":"retryable"}
)";

TEST(TimelineTest, BarsSpanAndUtilization) {
  auto t = ParseEvents(kEvents);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->bars.size(), 2u);
  EXPECT_EQ(t->bars[0].step_id, "solve");
  EXPECT_DOUBLE_EQ(t->bars[0].start, 1.0);
  EXPECT_DOUBLE_EQ(t->bars[0].end, 5.0);
  EXPECT_EQ(t->bars[1].outcome, "failed");
  EXPECT_DOUBLE_EQ(t->span, 10.0);
  // solve: 4 s x 4 PUs; report: 4 s x 1 PU; of 4 PUs x 10 s.
  EXPECT_DOUBLE_EQ(t->busy_core_seconds, 20.0);
  EXPECT_DOUBLE_EQ(t->Utilization(), 0.5);
}

TEST(TimelineTest, SvgAndSummaryShowTheSteps) {
  auto t = ParseEvents(kEvents);
  ASSERT_TRUE(t.ok());
  std::string svg = TimelineSvg(*t);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("n2 cpu 1"), std::string::npos);
  EXPECT_NE(svg.find("utilization 50.0 %"), std::string::npos);
  EXPECT_NE(svg.find("stroke=\"#c00\""), std::string::npos);  // the failed step is marked
  std::string summary = TimelineSummary(*t);
  EXPECT_NE(summary.find("steps: 2, completed 1, failed 1"), std::string::npos) << summary;
  EXPECT_NE(summary.find("core-time utilization: 50.0 %"), std::string::npos) << summary;
}

TEST(TimelineTest, AStepStillRunningEndsAtTheLastEvent) {
  auto t = ParseEvents(R"({"t":0,"event":"place","lease_id":"l","step_id":"s","nodes":[{"name":"n1","cpus":[0]}]}
{"t":1,"event":"start","lease_id":"l","step_id":"s"}
{"t":3,"event":"claim","offered":0,"max":1})");
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->bars.size(), 1u);
  EXPECT_DOUBLE_EQ(t->bars[0].end, 3.0);
}

TEST(TimelineTest, MalformedLineIsNamed) {
  auto t = ParseEvents("{\"t\":1,\"event\":\"claim\"}\n{broken\n");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("line 2"), std::string::npos);
}

}  // namespace
}  // namespace scimesh::launcher

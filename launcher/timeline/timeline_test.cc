// Unit tests for the timeline built from an events file.
#include "launcher/timeline/timeline.h"

#include <gtest/gtest.h>

namespace scimesh::launcher {
namespace {

// solve on 4 PUs for 4 s; report fails once and completes on its second
// attempt (1 PU, 4 s each); then the launcher idles 8 s before it leaves.
constexpr char kEvents[] = R"({"t":100.0,"event":"allocation","worker_id":"w","nodes":[{"name":"n1","cpus":2,"gpus":0},{"name":"n2","cpus":2,"gpus":0}]}
{"t":100.0,"event":"claim","offered":2,"max":4}
{"t":100.0,"event":"place","lease_id":"l_a","run_id":"r","step_id":"solve","attempt":1,"nodes":[{"name":"n1","ranks":2,"cpus":[0,1],"gpus":[]},{"name":"n2","ranks":2,"cpus":[0,1],"gpus":[]}]}
{"t":100.0,"event":"start","lease_id":"l_a","run_id":"r","step_id":"solve","attempt":1}
{"t":104.0,"event":"end","lease_id":"l_a","run_id":"r","step_id":"solve","attempt":1,"exit":"exit status 0"}
{"t":104.0,"event":"outcome","lease_id":"l_a","run_id":"r","step_id":"solve","attempt":1,"outcome":"completed","detail":"applied"}
{"t":104.0,"event":"place","lease_id":"l_b","run_id":"r","step_id":"report","attempt":1,"nodes":[{"name":"n1","ranks":1,"cpus":[0],"gpus":[]}]}
{"t":104.0,"event":"start","lease_id":"l_b","run_id":"r","step_id":"report","attempt":1}
{"t":108.0,"event":"end","lease_id":"l_b","run_id":"r","step_id":"report","attempt":1,"exit":"exit status 1"}
{"t":108.0,"event":"outcome","lease_id":"l_b","run_id":"r","step_id":"report","attempt":1,"outcome":"failed","detail":"retryable"}
{"t":108.0,"event":"place","lease_id":"l_c","run_id":"r","step_id":"report","attempt":2,"nodes":[{"name":"n2","ranks":1,"cpus":[1],"gpus":[]}]}
{"t":108.0,"event":"start","lease_id":"l_c","run_id":"r","step_id":"report","attempt":2}
{"t":112.0,"event":"end","lease_id":"l_c","run_id":"r","step_id":"report","attempt":2,"exit":"exit status 0"}
{"t":112.0,"event":"outcome","lease_id":"l_c","run_id":"r","step_id":"report","attempt":2,"outcome":"completed","detail":"applied"}
{"t":120.0,"event":"claim","offered":0,"max":4}
)";

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(TimelineTest, BarsSpanAndUtilizationOverTheBusySpan) {
  auto t = ParseEvents(kEvents);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->bars.size(), 3u);
  EXPECT_EQ(t->bars[0].step_id, "solve");
  EXPECT_DOUBLE_EQ(t->bars[0].start, 0.0);
  EXPECT_DOUBLE_EQ(t->bars[0].end, 4.0);
  EXPECT_EQ(t->bars[1].outcome, "failed");
  EXPECT_EQ(t->StepCount(), 2u);
  EXPECT_EQ(t->StepIds(), (std::vector<std::string>{"solve", "report"}));
  EXPECT_DOUBLE_EQ(t->span, 20.0);
  EXPECT_DOUBLE_EQ(t->busy_span, 12.0);
  EXPECT_DOUBLE_EQ(t->IdleTail(), 8.0);
  // 4 s x 4 PUs + 2 x (4 s x 1 PU), of 4 PUs x 12 s: the idle tail does not count.
  EXPECT_DOUBLE_EQ(t->busy_core_seconds, 24.0);
  EXPECT_DOUBLE_EQ(t->Utilization(), 0.5);
}

TEST(TimelineTest, SummaryCountsStepsAndAttemptsApart) {
  auto t = ParseEvents(kEvents);
  ASSERT_TRUE(t.ok());
  const std::string summary = TimelineSummary(*t);
  EXPECT_TRUE(Has(summary, "steps: 2, attempts: 3 (completed 2, failed 1)\n")) << summary;
  EXPECT_TRUE(Has(summary, "busy span: 12.0 s, then idle: 8.0 s\n")) << summary;
  EXPECT_TRUE(Has(summary, "core-time utilization: 50.0 % of the busy span (busy 24.0 of 48.0 core-seconds)"))
      << summary;
}

TEST(TimelineTest, SvgHasALegendOutcomeStylesAndTheIdleTail) {
  auto t = ParseEvents(kEvents);
  ASSERT_TRUE(t.ok());
  const std::string svg = TimelineSvg(*t);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_TRUE(Has(svg, ">n2 cpu 1<"));
  EXPECT_TRUE(Has(svg, "2 steps, 3 attempts; busy 12.0 s, then idle 8.0 s; core-time utilization 50.0 %"));
  const std::string legend = svg.substr(svg.find("<g id=\"legend\">"));
  EXPECT_TRUE(Has(legend, ">solve (1 attempt)<")) << legend;
  EXPECT_TRUE(Has(legend, ">report (2 attempts, 1 failed)<")) << legend;
  // report's failed attempt is hatched in its colour and outlined; its completed one is solid.
  EXPECT_TRUE(Has(svg, "fill=\"url(#hatch-1)\" stroke=\"#c00\" stroke-width=\"1.5\"><title>report attempt 1 (failed)"));
  EXPECT_TRUE(Has(svg, "fill=\"#f28e2b\"><title>report attempt 2 (completed)"));
  EXPECT_TRUE(Has(svg, "fill=\"#4e79a7\"><title>solve attempt 1 (completed)"));
  EXPECT_TRUE(Has(svg, ">idle tail 8.0 s<"));
  EXPECT_TRUE(Has(svg, "text-anchor=\"end\">20.0 s<"));  // the last axis label ends inside
}

TEST(TimelineTest, TheSvgGrowsToFitLongNames) {
  const std::string id(120, 's'), node(40, 'n');
  auto t = ParseEvents(R"({"t":0,"event":"place","lease_id":"l","step_id":")" + id +
                       R"(","nodes":[{"name":")" + node + R"(","cpus":[0]}]}
{"t":0,"event":"start","lease_id":"l","step_id":")" + id + R"("}
{"t":1,"event":"end","lease_id":"l","step_id":")" + id + R"("})");
  ASSERT_TRUE(t.ok());
  const std::string svg = TimelineSvg(*t);
  const double width = std::stod(svg.substr(svg.find("width=\"") + 7));
  EXPECT_GE(width, 7.0 * static_cast<double>(id.size() + 12));  // the legend's entry: "<id> (1 attempt)"
  // The rows start after the longest row label.
  EXPECT_TRUE(Has(svg, "<rect x=\"" + std::to_string(10 + 7 * (node.size() + 6) + 10) + "\""));
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

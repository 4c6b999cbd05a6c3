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
  EXPECT_EQ(t->Steps(), (std::vector<TimelineStep>{{"run r", "solve"}, {"run r", "report"}}));
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
  EXPECT_TRUE(
      Has(svg, "fill=\"url(#hatch-1)\" stroke=\"#c00\" stroke-width=\"1.5\"><title>report attempt 1 (failed) 4.0 s"));
  EXPECT_TRUE(Has(svg, "fill=\"#f28e2b\"><title>report attempt 2 (completed)"));
  EXPECT_TRUE(Has(svg, "fill=\"#4e79a7\"><title>solve attempt 1 (completed)"));
  EXPECT_TRUE(Has(svg, ">idle tail 8.0 s<"));
  EXPECT_TRUE(Has(svg, "text-anchor=\"end\">20.0 s<"));  // the last axis label ends inside
}

// One attempt of `step` in `workflow` ("" : not recorded) and `run`, on n1's PU `cpu` from `t0` to `t1`.
std::string Attempt(const std::string& workflow, const std::string& run, const std::string& step, int attempt,
                    double t0, double t1, const std::string& outcome, const std::string& detail, int cpu) {
  const std::string lease = R"("lease_id":")" + run + step + std::to_string(attempt) + R"(","run_id":")" + run +
                            R"(","step_id":")" + step + R"(","attempt":)" + std::to_string(attempt);
  const std::string wf = workflow.empty() ? "" : R"("workflow":")" + workflow + R"(",)";
  return R"({"t":)" + std::to_string(t0) + R"(,"event":"place",)" + wf + lease +
         R"(,"nodes":[{"name":"n1","cpus":[)" + std::to_string(cpu) + "]}]}\n" + R"({"t":)" +
         std::to_string(t0) + R"(,"event":"start",)" + lease + "}\n" + R"({"t":)" + std::to_string(t1) +
         R"(,"event":"outcome",)" + lease + R"(,"outcome":")" + outcome + R"(","detail":")" + detail + "\"}\n";
}

TEST(TimelineTest, StepsOfOneIdInTwoWorkflowsAreApartInLegendAndSummary) {
  // poisson's solve ran in two runs (one entry); heat's solve is another step.
  auto t = ParseEvents(Attempt("poisson", "r1", "solve", 1, 0, 2, "failed", "retryable", 0) +
                       Attempt("poisson", "r1", "solve", 2, 2, 4, "completed", "applied", 0) +
                       Attempt("heat", "r2", "solve", 1, 0, 3, "completed", "applied", 1) +
                       Attempt("poisson", "r3", "solve", 1, 4, 6, "completed", "applied", 0));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->Steps(), (std::vector<TimelineStep>{{"poisson", "solve"}, {"heat", "solve"}}));
  EXPECT_EQ(t->Owners(), (std::vector<std::string>{"poisson", "heat"}));
  const std::string legend = TimelineSvg(*t).substr(TimelineSvg(*t).find("<g id=\"legend\">"));
  EXPECT_TRUE(Has(legend, ">poisson / solve (3 attempts, 1 failed)<")) << legend;
  EXPECT_TRUE(Has(legend, ">heat / solve (1 attempt)<")) << legend;
  EXPECT_TRUE(Has(TimelineSvg(*t), "<title>heat / solve attempt 1 (completed) 3.0 s<"));
  const std::string summary = TimelineSummary(*t);
  EXPECT_TRUE(Has(summary, "steps: 3, attempts: 4 (completed 3, failed 1)\n")) << summary;
  EXPECT_TRUE(Has(summary, "\n  poisson: steps: 2, attempts: 3 (completed 2, failed 1)\n")) << summary;
  EXPECT_TRUE(Has(summary, "\n  heat: steps: 1, attempts: 1 (completed 1)\n")) << summary;
}

TEST(TimelineTest, WithoutAWorkflowEachRunStandsForOne) {
  auto t = ParseEvents(Attempt("", "r1", "solve", 1, 0, 2, "completed", "applied", 0) +
                       Attempt("", "r2", "solve", 1, 0, 2, "completed", "applied", 1));
  ASSERT_TRUE(t.ok());
  const std::string svg = TimelineSvg(*t);
  EXPECT_TRUE(Has(svg, ">run r1 / solve (1 attempt)<")) << svg;
  EXPECT_TRUE(Has(svg, ">run r2 / solve (1 attempt)<")) << svg;
  EXPECT_TRUE(Has(TimelineSummary(*t), "\n  run r2: steps: 1, attempts: 1 (completed 1)\n"));
}

TEST(TimelineTest, OneWorkflowNamesNoOwner) {
  auto t = ParseEvents(Attempt("poisson", "r1", "solve", 1, 0, 2, "completed", "applied", 0) +
                       Attempt("poisson", "r2", "solve", 1, 2, 4, "completed", "applied", 0));
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(Has(TimelineSvg(*t), ">solve (2 attempts)<"));
  EXPECT_FALSE(Has(TimelineSummary(*t), "poisson"));
}

TEST(TimelineTest, PreemptedCancelledAndAbandonedAreStoppedNotFailed) {
  auto end = [](const std::string& outcome, const std::string& detail) {
    TimelineBar b;
    b.outcome = outcome;
    b.detail = detail;
    return std::make_pair(EndOf(b), EndName(b));
  };
  EXPECT_EQ(end("failed", "preempted"), std::make_pair(AttemptEnd::kStopped, std::string("preempted")));
  EXPECT_EQ(end("failed", "cancelled"), std::make_pair(AttemptEnd::kStopped, std::string("cancelled")));
  EXPECT_EQ(end("abandoned", "fenced"), std::make_pair(AttemptEnd::kStopped, std::string("abandoned")));
  EXPECT_EQ(end("failed", "retryable"), std::make_pair(AttemptEnd::kFailed, std::string("failed")));
  EXPECT_EQ(end("failed", "timeout"), std::make_pair(AttemptEnd::kFailed, std::string("failed")));
  EXPECT_EQ(end("completed", "applied"), std::make_pair(AttemptEnd::kCompleted, std::string("completed")));
  EXPECT_EQ(end("unreported", ""), std::make_pair(AttemptEnd::kUnknown, std::string("unreported")));
  EXPECT_EQ(end("", ""), std::make_pair(AttemptEnd::kUnknown, std::string("unfinished")));

  auto t = ParseEvents(Attempt("", "r", "solve", 1, 0, 2, "failed", "preempted", 0) +
                       Attempt("", "r", "solve", 2, 2, 4, "failed", "retryable", 0));
  ASSERT_TRUE(t.ok());
  const std::string svg = TimelineSvg(*t);
  EXPECT_TRUE(Has(svg, "fill=\"url(#dots-0)\" stroke=\"#333\" stroke-width=\"1\"><title>solve attempt 1 (preempted)"))
      << svg;
  EXPECT_TRUE(Has(svg, "fill=\"url(#hatch-0)\" stroke=\"#c00\" stroke-width=\"1.5\"><title>solve attempt 2 (failed)"));
  EXPECT_TRUE(Has(svg, "<pattern id=\"dots-0\""));
  EXPECT_TRUE(Has(svg, "fill=\"url(#dots-key)\" stroke=\"#333\" stroke-width=\"1\"/><text x=\"")) << svg;
  EXPECT_TRUE(Has(svg, ">stopped: preempted, cancelled or abandoned (dotted)<"));
  EXPECT_TRUE(Has(svg, ">solve (2 attempts, 1 failed, 1 stopped)<"));
  EXPECT_TRUE(Has(TimelineSummary(*t), "steps: 1, attempts: 2 (failed 1, preempted 1)\n"));
}

TEST(TimelineTest, ASubSecondAttemptIsDrawnAtTheMinimumWidthWhereItStarted) {
  // An hour's timeline: 0.05 s is 0.0125 px of the 900 px chart.
  auto t = ParseEvents(Attempt("", "r", "long", 1, 0, 3600, "completed", "applied", 0) +
                       Attempt("", "r", "quick", 1, 1800, 1800.05, "completed", "applied", 1) +
                       Attempt("", "r", "next", 1, 1800.05, 3600, "completed", "applied", 1));
  ASSERT_TRUE(t.ok());
  const std::string svg = TimelineSvg(*t);
  // The rows start at x 80 (a 60 px label column): 1800 s is x 530.
  EXPECT_TRUE(Has(svg, "<rect x=\"530.0\" y=\"78\" width=\"4.0\" height=\"16\" fill=\"#f28e2b\"><title>quick attempt 1 "
                       "(completed) 0.05 s<"))
      << svg;
  // The next bar on that PU keeps its own start; the narrow one is drawn after it, on top.
  EXPECT_TRUE(Has(svg, "<rect x=\"530.0\" y=\"78\" width=\"450.0\""));
  EXPECT_LT(svg.find("<title>next attempt 1"), svg.find("<title>quick attempt 1"));
  EXPECT_TRUE(Has(svg, "<rect x=\"80.0\" y=\"60\" width=\"900.0\""));
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

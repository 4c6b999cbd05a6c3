// Timeline: reads an events file and draws what the allocation did -- a Gantt
// chart of steps over nodes and cores (SVG) with the core-time utilization,
// and a text summary. What `scimesh-launch report` prints and writes.
// Free functions of their inputs; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "protocol/util/status.h"

namespace scimesh::launcher {

struct TimelineBar {
  std::string lease_id, run_id, step_id, outcome;
  int attempt = 0;
  double start = 0, end = 0;  // seconds since the first event
  std::vector<std::pair<std::string, std::vector<int>>> cores;  // node -> PUs
};

struct Timeline {
  std::vector<std::pair<std::string, int>> nodes;  // allocation order: name, cpus
  std::vector<TimelineBar> bars;  // one per attempt, by start time
  double span = 0;                // seconds from the first to the last event
  double busy_span = 0;           // seconds from the first event to the end of the last attempt
  double busy_core_seconds = 0;   // sum over bars of duration x PUs
  int Cpus() const;               // of all nodes
  double IdleTail() const { return span - busy_span; }  // the launcher waiting after the last attempt
  double Utilization() const;     // busy / (all PUs x busy_span), 0..1: the idle tail does not count
  size_t StepCount() const;       // distinct (run, step): attempts of one step count once
  // Distinct step ids in order of first placement (the legend's order).
  std::vector<std::string> StepIds() const;
};

// Parses JSON lines; unknown events are skipped, malformed lines are errors
// naming their line number. Steps that started but never ended end at the
// last event (a launcher killed mid-run).
Result<Timeline> ParseEvents(std::string_view jsonl);

// The Gantt chart: a row per node and CPU, a bar per attempt coloured by
// step (completed: solid; failed: hatched, outlined red; abandoned,
// unreported or unfinished: pale, dashed outline), the idle tail shaded, a
// legend of every step's colour and of the outcome styles. The picture's
// size fits every label (timeline_svg.cc).
std::string TimelineSvg(const Timeline& t);
// Steps and attempts by outcome, the busy span and idle tail, utilization.
std::string TimelineSummary(const Timeline& t);

// `v` with `digits` decimals, as printf's "%.*f" (the summary's and the SVG's numbers).
std::string Fixed(double v, int digits);

}  // namespace scimesh::launcher

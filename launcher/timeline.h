// Timeline: reads an events file and draws what the allocation did -- a Gantt
// chart of steps over nodes and cores (SVG) with the core-time utilization,
// and a text summary. What `scimesh-launch report` prints and writes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "protocol/status.h"

namespace scimesh::launcher {

struct TimelineBar {
  std::string lease_id, run_id, step_id, outcome;
  int attempt = 0;
  double start = 0, end = 0;  // seconds since the first event
  std::vector<std::pair<std::string, std::vector<int>>> cores;  // node -> PUs
};

struct Timeline {
  std::vector<std::pair<std::string, int>> nodes;  // allocation order: name, cpus
  std::vector<TimelineBar> bars;
  double span = 0;               // seconds from the first to the last event
  double busy_core_seconds = 0;  // sum over bars of duration x PUs
  double Utilization() const;    // busy / (all PUs x span), 0..1
};

// Parses JSON lines; unknown events are skipped, malformed lines are errors
// naming their line number. Steps that started but never ended end at the
// last event (a launcher killed mid-run).
Result<Timeline> ParseEvents(std::string_view jsonl);

std::string TimelineSvg(const Timeline& t);
std::string TimelineSummary(const Timeline& t);

}  // namespace scimesh::launcher

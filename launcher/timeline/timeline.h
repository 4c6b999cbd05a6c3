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
  std::string lease_id, run_id, workflow, step_id, outcome, detail;  // workflow: "" when not recorded
  int attempt = 0;
  double start = 0, end = 0;  // seconds since the first event
  std::vector<std::pair<std::string, std::vector<int>>> cores;  // node -> PUs
  // Whose step this is: its workflow, or "run <run_id>" where the events do
  // not name the workflow (a run belongs to one workflow).
  std::string Owner() const;
};

// How an attempt ended, as the picture draws it. kStopped: stopped from
// outside, not by its own fault -- outcome "failed" with detail "preempted"
// (the allocation ended, Ctrl-C; requeued free) or "cancelled", or outcome
// "abandoned" (fenced, its run ended, its lease expired). kUnknown:
// "unreported", or no outcome yet (unfinished).
enum class AttemptEnd { kCompleted, kFailed, kStopped, kUnknown };
AttemptEnd EndOf(const TimelineBar& b);
// The summary's and the bar's word for it: the outcome, "preempted" or
// "cancelled" for such failures, "unfinished" without an outcome.
std::string EndName(const TimelineBar& b);

// A step of the legend: one colour and entry per workflow (or run) and step id.
struct TimelineStep {
  std::string owner, step_id;
  bool operator==(const TimelineStep&) const = default;
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
  // Distinct (owner, step id) in order of first placement (the legend's order).
  std::vector<TimelineStep> Steps() const;
  // Distinct owners (workflows, or runs), in order of first placement.
  std::vector<std::string> Owners() const;
};

// "solve", or with `name_owner` (more than one owner present) "poisson / solve".
std::string StepLabel(const TimelineStep& step, bool name_owner);

// Parses JSON lines; unknown events are skipped, malformed lines are errors
// naming their line number. Steps that started but never ended end at the
// last event (a launcher killed mid-run).
Result<Timeline> ParseEvents(std::string_view jsonl);

// The Gantt chart: a row per node and CPU, a bar per attempt coloured by
// step (completed: solid; failed: hatched, outlined red; stopped --
// preempted, cancelled or abandoned: dotted, outlined dark grey; unreported
// or unfinished: pale, dashed outline), the idle tail shaded, a legend of
// every step's colour and of the outcome styles. Every bar is at least
// kMinBarWidth px wide, its left edge at its start (a sub-second attempt on
// an hour's timeline still shows; a bar's width does not move another's).
// The picture's size fits every label (timeline_svg.cc).
inline constexpr double kMinBarWidth = 4.0;
std::string TimelineSvg(const Timeline& t);
// Steps and attempts by how they ended, then (where more than one workflow
// or run is present) a line per workflow or run; the busy span and idle
// tail, utilization.
std::string TimelineSummary(const Timeline& t);

// `v` with `digits` decimals, as printf's "%.*f" (the summary's and the SVG's numbers).
std::string Fixed(double v, int digits);

}  // namespace scimesh::launcher

// scimesh-alloc's decision: from the queued demand and the jobs it already
// has, which allocations to submit and which pending ones to cancel.
//
// A pure function of its input (no clock, no I/O), so every rule is a unit
// test. The model, in node-seconds:
// - One step costs nodes x walltime_s x (the share of a node's cores or GPUs
//   its ranks take) node-seconds; one allocation of a shape provides
//   nodes x (time - margin) of them, to steps that fit the shape; a running
//   one what its time left provides.
// - A group's `runnable` steps are covered by its jobs, running ones first
//   (the least time left first), then pending ones oldest first; what is
//   left is submitted, on the shape that needs the fewest jobs (then the
//   fewest node-seconds) among those within --max-jobs, --max-nodes and
//   --backlog. Wide steps are covered first.
// - The live workers' view (claimable_by_live_workers) is not used: it
//   counts each worker's capacity once per group, and a worker it did not
//   submit takes demand away (less runnable) instead.
// - A pending job that covered nothing is cancelled: its demand is gone.
// - A group no shape fits is reported and never submitted for.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "launcher/alloc/alloc_shape.h"
#include "protocol/wire/wire.h"

namespace scimesh::alloc {

// One of scimesh-alloc's jobs as squeue shows it.
struct OurJob {
  std::string job_id;
  bool pending = true;      // false: running (or completing)
  int64_t nodes = 1;
  int64_t time_limit_s = 0;
  int64_t running_s = 0;    // how long it has run; 0 when pending
  friend bool operator==(const OurJob&, const OurJob&) = default;
};

struct PlanLimits {
  int64_t max_jobs = 4;          // pending + running
  int64_t max_nodes = 8;         // over pending + running jobs
  int64_t backlog = 1;           // pending jobs at once
  int64_t margin_s = 120;        // the launchers' --drain-margin
};

struct PlanInput {
  std::vector<DemandGroup> demand;
  std::vector<OurJob> jobs;  // pending ones in submission order
  std::vector<Shape> shapes;
  PlanLimits limits;
};

struct Submission {
  size_t shape = 0;     // index into PlanInput::shapes
  std::string for_key;  // "workflow/version/step_id" of the demand it is for
};
struct Cancellation {
  std::string job_id;
  std::string reason;  // "no demand left for it"
};
struct Unfitted {
  std::string key;     // "workflow/version/step_id"
  std::string reason;  // WhyNotFits against the largest shape
  int64_t runnable = 0;
};

struct Plan {
  std::vector<Submission> submit;
  std::vector<Cancellation> cancel;
  std::vector<Unfitted> unfittable;
  int64_t runnable = 0;    // over all groups
  int64_t uncovered = 0;   // runnable less what its jobs cover
  int64_t waiting = 0;     // steps whose needs are not complete (not demand yet)
  std::string held_back;   // "--max-jobs 4 reached": why less was submitted than needed; empty when nothing was
};

Plan MakePlan(const PlanInput& input);

// Why no shape can run a step of `group` (WhyNotFits against the largest
// shape, most nodes then the longest time: its reason is the telling one;
// "no shape is configured" for none); empty when one can.
std::string WhyNoShapeFits(const std::vector<Shape>& shapes, const DemandGroup& group, int64_t margin_s);

// The key of a group: "workflow/version/step_id".
std::string GroupKey(const DemandGroup& group);

}  // namespace scimesh::alloc

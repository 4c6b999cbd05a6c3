// scimesh-alloc's loop: each tick asks the coordinator for the demand and
// SLURM for its jobs, makes the plan, submits and cancels, and says what it
// did in one line. Refusals by sbatch pause it after --failure-limit in a row.
//
// Not thread-safe: one thread ticks.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "launcher/alloc/alloc_plan.h"
#include "launcher/alloc/slurm_jobs.h"
#include "protocol/util/clock.h"
#include "protocol/util/status.h"
#include "protocol/wire/wire.h"

namespace scimesh::alloc {

struct LoopSettings {
  std::vector<Shape> shapes;  // cores per node known
  PlanLimits limits;
  JobRequest job;             // every field but the shape
  int64_t failure_limit = 3;
  int64_t pause_s = 300;      // the first pause; doubles to 16x
  bool dry_run = false;       // decide and say, submit and cancel nothing
};

// What the last tick saw and did (the status file and table show it).
struct LoopState {
  std::optional<QueuedDemand> demand;  // the last answer; kept when a later ask fails
  std::vector<OurJob> jobs;            // as listed before this tick's actions
  Plan plan;
  std::vector<std::string> submitted;  // job ids submitted this tick
  std::vector<std::string> cancelled;  // job ids cancelled this tick
  std::string trouble;                 // why this tick did nothing: coordinator or squeue error
  int64_t refusals_in_row = 0;
  std::string last_refusal;            // sbatch's words
  int64_t pauses = 0;                  // pauses since the last accepted submission
  std::optional<MonoTime> paused_until;
  std::string line;                    // the tick's one line
};

class AllocLoop {
 public:
  using DemandSource = std::function<Result<QueuedDemand>()>;
  AllocLoop(LoopSettings settings, DemandSource demand, SlurmJobs& slurm, const Clock& clock);

  // One decision; returns its line (also in state().line).
  const std::string& Tick();
  const LoopState& state() const { return state_; }
  const LoopSettings& settings() const { return settings_; }

 private:
  void Act();
  bool Paused() const;
  void Refused(const std::string& words);
  std::string Line() const;

  LoopSettings settings_;
  DemandSource demand_;
  SlurmJobs& slurm_;
  const Clock& clock_;
  LoopState state_;
  std::set<std::string> reported_unfittable_;
  std::string last_trouble_;
};

}  // namespace scimesh::alloc

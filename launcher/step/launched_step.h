// LaunchedStep: a lease's step as the launcher runs it, in the phases the
// lease engine schedules:
//   Prepare()  (blocking, a pool thread): placement.json, directory inputs
//              unpacked, the step's run.setup, the launch command built;
//   the launch's processes run, watched by StepWatch on the event loop;
//   Conclude() (blocking, a pool thread): rank 0's last word, run.finish,
//              a failure a rank reported (failure.json, first), and what
//              the step left in its attempt directory (output.json,
//              state_patch.json, usage.json, artifacts/, a directory there
//              packed as one archive) turned into the body's result.
// The lease's life around it (inputs, started, uploads, complete/fail, every
// 409) is protocol's LeaseSession.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "launcher/allocation_end.h"
#include "launcher/definitions/step_commands.h"
#include "launcher/placement/placement.h"
#include "launcher/step/launch_command.h"
#include "launcher/step/step_process.h"
#include "launcher/step/step_watch.h"
#include "launcher/timeline/events_log.h"
#include "protocol/runtime/step_context.h"
#include "protocol/util/unique_fd.h"

namespace scimesh::launcher {

struct StepLaunch {
  LaunchContext launch;          // backend and tools; attempt_dir is filled in here
  const StepCommand* command = nullptr;
  Placement placement;
  EventsLog* events = nullptr;
  const std::atomic<bool>* preempt = nullptr;  // set: stop the step, fail it `preempted`
  // Called when srun refused the step because the allocation is ending; the
  // step then fails `preempted`. May be empty.
  std::function<void()> allocation_ending;
  // Marked when SLURM signals the allocation's end: a step (or its setup or
  // finish) that failed of it fails `preempted`. Null: nothing ends it
  // (no SLURM).
  const AllocationEnd* allocation_end = nullptr;
  std::chrono::milliseconds kill_grace{10000};  // SIGTERM -> SIGKILL
  std::chrono::milliseconds poll{200};          // run.setup/finish polling; lease.state on network filesystems
};

class LaunchedStep {
 public:
  // Both must outlive the step.
  LaunchedStep(StepContext& ctx, const StepLaunch& in) : ctx_(ctx), in_(in) {}

  // nullopt: ready to launch (plan(), spawn_spec()); else the step's result.
  // `direct`: the launch is the program itself (or its rank wrapper), forked
  // on the step's node by a node agent, not srun.
  std::optional<StepResult> Prepare(bool direct = false);

  const LaunchPlan& plan() const { return plan_; }
  SpawnSpec spawn_spec() const;
  // For the watch of the launched processes.
  WatchParams watch_params() const;

  // After the launched processes ended (or could not start: `end` nullopt
  // with `spawn_error`).
  StepResult Conclude(const WatchEnd& end);
  StepResult NotStarted(const Status& spawn_error);
  // The node agent that was to run it is gone: not the step's fault.
  StepResult AgentGone(const std::string& why);

 private:
  std::optional<StepResult> RunPart(StepPart part, const std::map<std::string, std::string>& extra_env);
  // A failed `exit` the allocation's end caused (waits up to
  // AllocationEnd::kSignalRace for the launcher's own signal).
  bool EndedByTheAllocation(const ExitInfo& exit) const;
  StepResult AllocationEnded(const ExitInfo& exit, const std::string& during);

  StepContext& ctx_;
  const StepLaunch& in_;
  LaunchContext launch_;
  UniqueFd dir_fd_;
  LaunchPlan plan_;
  std::chrono::steady_clock::time_point t0_, walltime_end_;
};

}  // namespace scimesh::launcher

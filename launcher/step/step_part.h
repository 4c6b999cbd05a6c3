// The serial parts of a step: `run.setup` before its parallel launch and
// `run.finish` after it, each one process on the step's first node in the
// attempt directory, stopped like the launch when the lease is lost, the
// walltime is up or the allocation drains (docs/launcher.md "Setup and finish").
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <string_view>

#include "launcher/definitions/step_commands.h"
#include "launcher/step/launch_command.h"
#include "launcher/step/step_process.h"
#include "protocol/runtime/step_context.h"

namespace scimesh::launcher {

// Why a step's process was stopped by the launcher (none: it exited by itself).
enum class StopCause { kNone, kLeaseLost, kWalltime, kPreempted, kRankZeroSilent };

enum class StepPart { kSetup, kFinish };

std::string_view PartName(StepPart part);  // "setup", "finish"

// The command line and environment of one part: inside SLURM
// `srun --exact --overlap -N1 -n1 -w <first node> --mpi=none ...`, locally the
// program itself. The environment is the step's (run.env, attempt dir, trace
// context) with the part's own `env` and then `extra` on top. Pure.
Result<LaunchPlan> BuildPartLaunch(const LaunchContext& ctx, const StepCommand& step, StepPart part,
                                   const Lease& lease, const Placement& placement,
                                   const std::map<std::string, std::string>& extra);

struct PartRun {
  StepPart part = StepPart::kSetup;
  const std::atomic<bool>* preempt = nullptr;  // set: stop it, the allocation is ending
  std::chrono::steady_clock::time_point deadline;  // the step's walltime ends here
  std::chrono::milliseconds kill_grace{10000};
  std::chrono::milliseconds poll{200};
};

struct PartOutcome {
  StopCause cause = StopCause::kNone;
  ExitInfo exit;
};

// Spawns `plan` with its output in <part>.out / <part>.err of `attempt_dir`
// and waits for it, stopping it (SIGTERM, grace, SIGKILL to its process group)
// when the lease is lost, the deadline passes or `preempt` is set. Runs on the
// lease's thread. An error: the process could not be started.
Result<PartOutcome> RunStepPart(const StepContext& ctx, const LaunchPlan& plan, const std::string& attempt_dir,
                                const PartRun& run);

// What a shell would say of the launch's end: the exit status, or 128 + the
// signal number; SCIMESH_LAUNCH_EXIT in the finish's environment.
std::string ShellExitStatus(const ExitInfo& exit);

}  // namespace scimesh::launcher

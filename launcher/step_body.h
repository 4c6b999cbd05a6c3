// StepBody for a launched step: unpacks its directory inputs, runs its
// run.setup, starts the placed step's processes (srun, mpirun or the
// program), hands heartbeating to rank 0 while it holds the lease, stops the
// processes when the lease is lost, the walltime is up or the allocation
// drains, runs its run.finish, and turns what the step left in its attempt
// directory (output.json, state_patch.json, usage.json, artifacts/, a
// directory there packed as one archive) into the body's result. The lease's life around it (inputs, started, uploads,
// complete/fail, every 409) is the client library's RunLease.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>

#include "launcher/events_log.h"
#include "launcher/launch_command.h"
#include "launcher/placement.h"
#include "launcher/step_commands.h"
#include "protocol/step_context.h"

namespace scimesh::launcher {

struct StepLaunch {
  LaunchContext launch;          // backend and tools; attempt_dir is filled in here
  const StepCommand* command = nullptr;
  Placement placement;
  EventsLog* events = nullptr;
  const std::atomic<bool>* preempt = nullptr;  // set: stop the step, fail it `preempted`
  // Called (on the lease's thread) when srun refused the step because the
  // allocation is ending; the step then fails `preempted`. May be empty.
  std::function<void()> allocation_ending;
  std::chrono::milliseconds kill_grace{10000};  // SIGTERM -> SIGKILL
  std::chrono::milliseconds poll{200};          // how often the process and lease.state are checked
};

// Runs on the lease's thread. Never throws.
StepResult RunLaunchedStep(StepContext& ctx, const StepLaunch& launch);

}  // namespace scimesh::launcher

// Running a step's setup and finish: one process on the first node, watched.
#include "launcher/step/step_part.h"

#include "launcher/step/step_environment.h"
#include "protocol/attempt/attempt_files.h"

namespace scimesh::launcher {

std::string_view PartName(StepPart part) { return part == StepPart::kSetup ? "setup" : "finish"; }

Result<LaunchPlan> BuildPartLaunch(const LaunchContext& ctx, const StepCommand& step, StepPart part,
                                   const Lease& lease, const Placement& placement,
                                   const std::map<std::string, std::string>& extra) {
  const auto& command = part == StepPart::kSetup ? step.setup : step.finish;
  if (!command || command->argv.empty()) {
    return Status::InvalidArgument("the step has no " + std::string(PartName(part)));
  }
  if (placement.nodes.empty()) return Status::InvalidArgument("empty placement");
  StepCommand as_step;  // the step's environment, the part's own on top
  as_step.env = step.env;
  for (const auto& [k, v] : command->env) as_step.env[k] = v;
  LaunchPlan plan;
  plan.env = StepEnvironment(ctx.env, as_step, lease, ctx.attempt_dir);
  for (const auto& [k, v] : extra) plan.env[k] = v;

  if (ctx.backend == Backend::kSlurm) {
    // One task on the step's first node. --overlap: it shares the CPUs the
    // launcher accounted to this step, so it never waits for a free core.
    plan.argv = {ctx.srun,
                 "--exact",
                 "--overlap",
                 "--nodes=1",
                 "--ntasks=1",
                 "--nodelist=" + placement.nodes.front().name,
                 "--cpus-per-task=" + std::to_string(lease.resources.cpus_per_rank),
                 "--mpi=none",
                 "--job-name=" + lease.step_id + "." + std::string(PartName(part)),
                 "--quiet"};
  } else {
    // Forked here: the part is the user's command and never talks to the
    // coordinator. (Under srun the job's environment must keep the key: the
    // SPANK plugin reads it there.)
    plan.keyless = true;
  }
  if (command->shell) {
    plan.argv.insert(plan.argv.end(), {"/bin/sh", "-c", command->argv.front()});
  } else {
    plan.argv.insert(plan.argv.end(), command->argv.begin(), command->argv.end());
  }
  return plan;
}

Result<PartOutcome> RunStepPart(const StepContext& ctx, const LaunchPlan& plan, const std::string& attempt_dir,
                                const PartRun& run) {
  const bool setup = run.part == StepPart::kSetup;
  auto proc = StepProcess::Spawn({plan.argv, plan.env, attempt_dir,
                                  attempt_dir + "/" + (setup ? kSetupOutFileName : kFinishOutFileName),
                                  attempt_dir + "/" + (setup ? kSetupErrFileName : kFinishErrFileName),
                                  {},
                                  plan.keyless});
  if (!proc.ok()) return proc.status();
  PartOutcome out;
  std::optional<ExitInfo> exit;
  while (!(exit = proc->WaitFor(run.poll))) {
    if (ctx.cancelled()) out.cause = StopCause::kLeaseLost;
    else if (std::chrono::steady_clock::now() > run.deadline) out.cause = StopCause::kWalltime;
    else if (run.preempt != nullptr && run.preempt->load()) out.cause = StopCause::kPreempted;
    if (out.cause != StopCause::kNone) {
      exit = proc->Stop(run.kill_grace);
      break;
    }
  }
  out.exit = *exit;
  return out;
}

std::string ShellExitStatus(const ExitInfo& exit) {
  return std::to_string(exit.signaled ? 128 + exit.code : exit.code);
}

}  // namespace scimesh::launcher

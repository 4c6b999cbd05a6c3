// The launched step as a body: spawn, watch, stop, collect.
#include "launcher/step_body.h"

#include <unistd.h>

#include "launcher/directory_artifacts.h"
#include "launcher/step_failure.h"
#include "launcher/step_part.h"
#include "launcher/step_process.h"
#include "launcher/step_results.h"
#include "protocol/atomic_file.h"
#include "protocol/attempt_files.h"
#include "protocol/host_name.h"
#include "protocol/lease_state.h"
#include "protocol/log.h"

namespace scimesh::launcher {
namespace {

std::shared_ptr<spdlog::logger> Log() { return log::For("launcher"); }


StepResult Collect(StepContext& ctx, int dir_fd) {
  auto results = ReadStepResults(dir_fd, ::geteuid());
  if (!results.ok()) return StepResult::Failure(FailClass::kInvalidOutput, results.status().message());
  if (results->state_patch) {
    if (Status s = ctx.SetStatePatch(*results->state_patch); !s.ok()) {
      return StepResult::Failure(FailClass::kInvalidOutput, std::string(kStatePatchFileName) + ": " + s.message());
    }
  }
  for (const auto& [key, value] : results->usage) ctx.SetUsage(key, value);
  for (const auto& [name, media] : results->artifacts) {
    // A directory travels as one archive, packed in its place.
    Status packed = media == kDirectoryArtifactMediaType ? PackDirectoryArtifact(dir_fd, name) : Status::Ok();
    if (!packed.ok()) return StepResult::Failure(FailClass::kInvalidOutput, packed.message());
    if (Status s = ctx.AddArtifact(name, media); !s.ok()) {
      return StepResult::Failure(FailClass::kInvalidOutput, "artifact " + name + ": " + s.message());
    }
  }
  const auto& output = results->output;
  if (!output || output->find_first_not_of(" \t\r\n") == std::string::npos) {
    return StepResult();  // an empty result: RunLease fails it invalid_output
  }
  return StepResult::Output(*output);
}

// Rank 0's final word, read after its process ended and before this
// launcher heartbeats again: a lease rank 0 lost must never be reported, and
// must never be beaten back to life by our own loop. True when lost.
bool LostByRankZero(StepContext& ctx, int dir_fd, bool rank0_held) {
  auto state = ReadLeaseStateAt(dir_fd, ::geteuid());
  const std::string& lease_id = ctx.lease().lease_id;
  if (state.ok() && state->holder == LeaseHolder::kRank0 && state->state == LeaseHold::kLost) {
    ctx.LeaseLostElsewhere(state->reason.value_or(CancelReason::kFenced));
    return true;
  }
  if (!state.ok() && rank0_held) {
    // Rank 0 held the lease and its last word cannot be read: whether it was
    // lost is unknown, so nothing may be reported; the lease expires instead.
    Log()->error("lease {}: the lease state is unreadable after rank 0 held it ({}); not reporting", lease_id,
                 log::EscapeForLog(state.status().message()));
    ctx.LeaseLostElsewhere(CancelReason::kExpired);
    return true;
  }
  // Rank 0 handed back (or never took over): its deadline counts when it was
  // measured on this host's clock. A no-op when our loop was never paused.
  ctx.ResumeHeartbeats(state.ok() ? DeadlineOnHost(*state, HostName()) : std::nullopt);
  return false;
}

// `during`: "" for the launch, " in its setup" / " in its finish".
StepResult StoppedBy(StopCause cause, const Lease& lease, const std::string& during = "") {
  switch (cause) {
    case StopCause::kLeaseLost:
      // Not sent: the token is cancelled, so RunLease abandons the lease.
      return StepResult::Retryable("the lease was lost; the step was stopped" + during);
    case StopCause::kWalltime:
      return StepResult::Failure(FailClass::kTimeout, "the step ran past its walltime of " +
                                                          std::to_string(lease.walltime_s) + " s and was stopped" +
                                                          during);
    case StopCause::kPreempted:
      return StepResult::Failure(FailClass::kPreempted, "the allocation is ending; the step was stopped" + during);
    case StopCause::kRankZeroSilent:
    case StopCause::kNone:
      break;
  }
  return StepResult::Retryable("rank 0 stopped heartbeating; the step was stopped");
}

// Runs the step's setup or finish, if it has one. nullopt: none, or it
// succeeded; else why the step fails.
std::optional<StepResult> RunPart(StepContext& ctx, const StepLaunch& in, const LaunchContext& launch, StepPart part,
                                  std::chrono::steady_clock::time_point deadline,
                                  const std::map<std::string, std::string>& extra_env) {
  const auto& command = part == StepPart::kSetup ? in.command->setup : in.command->finish;
  if (!command) return std::nullopt;
  const std::string name(PartName(part));
  auto plan = BuildPartLaunch(launch, *in.command, part, ctx.lease(), in.placement, extra_env);
  if (!plan.ok()) return StepResult::Fatal("the step's " + name + ": " + plan.status().message());
  auto outcome = RunStepPart(ctx, *plan, launch.attempt_dir, {part, in.preempt, deadline, in.kill_grace, in.poll});
  if (!outcome.ok()) return StepResult::Fatal("the step's " + name + " could not start: " + outcome.status().message());
  if (outcome->cause != StopCause::kNone) return StoppedBy(outcome->cause, ctx.lease(), " in its " + name);
  if (outcome->exit.signaled || outcome->exit.code != 0) {
    return StepResult::Retryable("the step's " + name + " failed: " + outcome->exit.Describe() + " (see " + name +
                                 ".err in its attempt directory)");
  }
  return std::nullopt;
}

}  // namespace

StepResult RunLaunchedStep(StepContext& ctx, const StepLaunch& in) {
  const Lease& lease = ctx.lease();
  LaunchContext launch = in.launch;
  launch.attempt_dir = ctx.attempt_dir();
  const std::string dir = launch.attempt_dir;
  const uid_t me = ::geteuid();
  auto dir_fd = OpenPrivateDirectory(dir, me, "attempt directory");
  if (!dir_fd.ok()) return StepResult::Retryable(dir_fd.status().message());
  const int dfd = dir_fd->get();

  if (Status s = WriteFileAtomically(dfd, kPlacementFileName, PlacementJson(in.placement), 0644); !s.ok()) {
    return StepResult::Retryable(std::string(kPlacementFileName) + ": " + s.message());
  }
  // Directory inputs are unpacked, each checked whole, before anything runs.
  if (Status s = UnpackDirectoryInputs(dfd, lease.input_artifacts); !s.ok()) return StepResult::Fatal(s.message());
  // The walltime covers setup, launch and finish.
  const auto t0 = std::chrono::steady_clock::now();
  const auto walltime = std::chrono::seconds(lease.walltime_s > 0 ? lease.walltime_s : 1LL << 40);
  if (in.events) in.events->Start(lease);
  if (auto failed = RunPart(ctx, in, launch, StepPart::kSetup, t0 + walltime, {})) {
    if (in.events) in.events->End(lease, "setup failed");
    return *failed;
  }
  auto plan = BuildLaunch(launch, *in.command, lease, in.placement);
  auto proc = plan.ok() ? StepProcess::Spawn({plan->argv, plan->env, dir, dir + "/" + kStepOutFileName,
                                              dir + "/" + kStepErrFileName})
                        : Result<StepProcess>(plan.status());
  if (!proc.ok()) {
    if (in.events) in.events->End(lease, "not started");
    return StepResult::Fatal(proc.status().message());
  }
  Log()->info("lease {} (step {}, attempt {}): started on {}", lease.lease_id, lease.step_id, lease.attempt,
              DescribePlacement(in.placement));

  const auto silence_limit = std::chrono::milliseconds(lease.lease_ttl_ms > 0 ? lease.lease_ttl_ms : 30000);
  bool rank0_holds = false;
  int64_t last_seq = -1;
  auto last_seq_change = std::chrono::steady_clock::now();
  StopCause cause = StopCause::kNone;
  std::optional<ExitInfo> exit;

  while (!(exit = proc->WaitFor(in.poll))) {
    const auto now = std::chrono::steady_clock::now();
    if (ctx.cancelled()) cause = StopCause::kLeaseLost;
    else if (now - t0 > walltime) cause = StopCause::kWalltime;
    else if (in.preempt != nullptr && in.preempt->load()) cause = StopCause::kPreempted;
    // The safe reader: a FIFO or symlink planted as lease.state is refused
    // at once, so this loop (walltime, lease loss) never stalls.
    if (auto state = ReadLeaseStateAt(dfd, me); state.ok()) {
      if (state->seq != last_seq) {
        last_seq = state->seq;
        last_seq_change = now;
      }
      if (state->holder == LeaseHolder::kRank0) {
        if (!rank0_holds && HeldBy(*state, LeaseHolder::kRank0)) {
          rank0_holds = true;
          ctx.PauseHeartbeats();  // one heartbeat stream per step: rank 0's
          Log()->info("lease {}: rank 0 holds the lease now", lease.lease_id);
        }
        if (state->state == LeaseHold::kLost) {
          cause = StopCause::kLeaseLost;
          // The lease is gone: RunLease must not report this attempt.
          ctx.LeaseLostElsewhere(state->reason.value_or(CancelReason::kFenced));
        }
        // Rank 0 hung or died without a word: its beats stopped.
        if (state->state == LeaseHold::kHeld && now - last_seq_change > silence_limit) {
          cause = StopCause::kRankZeroSilent;
        }
      }
    }
    if (cause != StopCause::kNone) {
      // A lost lease reaches the ranks through cancelled() too: give them the
      // grace to stop on their own before SIGTERM, then SIGKILL.
      if (cause == StopCause::kLeaseLost) exit = proc->WaitFor(in.kill_grace);
      if (!exit) exit = proc->Stop(in.kill_grace);
      break;
    }
  }
  // The process may have ended before any poll above saw what rank 0 wrote.
  if (LostByRankZero(ctx, dfd, rank0_holds)) cause = StopCause::kLeaseLost;
  // Finish runs after the launch ended by itself, failed or not; the
  // launch's own failure is reported first.
  std::optional<StepResult> finish_failed;
  if (cause == StopCause::kNone) {
    finish_failed = RunPart(ctx, in, launch, StepPart::kFinish, t0 + walltime,
                            {{"SCIMESH_LAUNCH_EXIT", ShellExitStatus(*exit)}});
  }
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ctx.SetUsage("wall_s", wall_s);
  if (in.events) in.events->End(lease, exit->Describe());

  if (cause != StopCause::kNone) return StoppedBy(cause, lease);
  if (exit->signaled || exit->code != 0) {
    auto err = ReadAttemptFileTail(dfd, kStepErrFileName, me, kMaxStepErrTailBytes);
    // srun refused the step because the job is ending (its time limit came
    // early, or a cancel): requeued without spending the step's budget, and
    // this launcher claims nothing more (found by tests/chaos).
    if (err.ok() && SrunFoundAllocationEnding(*err)) {
      if (in.allocation_ending) in.allocation_ending();
      return StepResult::Failure(FailClass::kPreempted, "srun could not start the step: the allocation is ending");
    }
    const std::string& launched = plan->argv.front();
    return DescribeFailedLaunch({*exit, err.ok() ? *err : "", in.command, launched.substr(launched.rfind('/') + 1)});
  }
  if (finish_failed) return *finish_failed;
  return Collect(ctx, dfd);
}

}  // namespace scimesh::launcher

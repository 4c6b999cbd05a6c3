// The launched step's phases before and after its processes run.
#include "launcher/step/launched_step.h"

#include <sys/statfs.h>
#include <unistd.h>

#include <linux/magic.h>

#include "launcher/step/directory_artifacts.h"
#include "launcher/step/memory_limit.h"
#include "launcher/step/step_failure.h"
#include "launcher/step/step_part.h"
#include "launcher/step/step_results.h"
#include "protocol/attempt/attempt_files.h"
#include "protocol/attempt/lease_state.h"
#include "protocol/util/atomic_file.h"
#include "protocol/util/host_name.h"
#include "protocol/util/log.h"

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

// The failure a rank reported (failure.json, scimesh_step_fail), whatever
// the launch's exit status and whatever else the step wrote; one that cannot
// be read is the step's invalid output. nullopt when no rank reported one.
std::optional<StepResult> ReportedFailure(int dir_fd) {
  auto failure = ReadStepFailure(dir_fd, ::geteuid());
  if (!failure.ok()) return StepResult::Failure(FailClass::kInvalidOutput, failure.status().message());
  if (!failure->has_value()) return std::nullopt;
  const FailureFile& f = **failure;
  // The client sanitises the message it sends (first line, paths, 4 KiB).
  return StepResult::Failure(f.failure_class, "rank " + std::to_string(f.rank) + " on " + f.host + ": " + f.message);
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

// Filesystems where another host's writes raise no inotify event here:
// lease.state written by a rank 0 on another node is polled instead.
bool NetworkFilesystem(int dir_fd) {
  struct statfs fs {};
  if (::fstatfs(dir_fd, &fs) != 0) return true;  // unknown: poll
  switch (static_cast<unsigned long>(fs.f_type)) {
    case NFS_SUPER_MAGIC:
    case SMB_SUPER_MAGIC:
    case 0xFF534D42UL:  // CIFS
    case 0xFE534D42UL:  // SMB2
    case 0x0BD00BD0UL:  // Lustre
    case 0x47504653UL:  // GPFS
    case 0x19830326UL:  // BeeGFS
    case 0x00C36400UL:  // CephFS
    case 0x01021997UL:  // 9p / v9fs
    case 0x65735546UL:  // FUSE
    case 0x5346414FUL:  // AFS
    case 0x013111A8UL:  // IBRIX
      return true;
    default:
      return false;
  }
}

}  // namespace

std::optional<StepResult> LaunchedStep::RunPart(StepPart part, const std::map<std::string, std::string>& extra_env) {
  const auto& command = part == StepPart::kSetup ? in_.command->setup : in_.command->finish;
  if (!command) return std::nullopt;
  const std::string name(PartName(part));
  auto plan = BuildPartLaunch(launch_, *in_.command, part, ctx_.lease(), in_.placement, extra_env);
  if (!plan.ok()) return StepResult::Fatal("the step's " + name + ": " + plan.status().message());
  auto outcome =
      RunStepPart(ctx_, *plan, launch_.attempt_dir, {part, in_.preempt, walltime_end_, in_.kill_grace, in_.poll});
  if (!outcome.ok()) return StepResult::Fatal("the step's " + name + " could not start: " + outcome.status().message());
  if (outcome->cause != StopCause::kNone) return StoppedBy(outcome->cause, ctx_.lease(), " in its " + name);
  if (EndedByTheAllocation(outcome->exit)) return AllocationEnded(outcome->exit, " in its " + name);
  if (outcome->exit.signaled || outcome->exit.code != 0) {
    return StepResult::Retryable("the step's " + name + " failed: " + outcome->exit.Describe() + " (see " + name +
                                 ".err in its attempt directory)");
  }
  return std::nullopt;
}

std::optional<StepResult> LaunchedStep::Prepare(bool direct) {
  const Lease& lease = ctx_.lease();
  launch_ = in_.launch;
  launch_.attempt_dir = ctx_.attempt_dir();
  auto dir_fd = OpenPrivateDirectory(launch_.attempt_dir, ::geteuid(), "attempt directory");
  if (!dir_fd.ok()) return StepResult::Retryable(dir_fd.status().message());
  dir_fd_ = std::move(*dir_fd);
  const int dfd = dir_fd_.get();
  if (Status s = WriteFileAtomically(dfd, kPlacementFileName, PlacementJson(in_.placement), 0644); !s.ok()) {
    return StepResult::Retryable(std::string(kPlacementFileName) + ": " + s.message());
  }
  // Directory inputs are unpacked, each checked whole, before anything runs.
  if (Status s = UnpackDirectoryInputs(dfd, lease.input_artifacts); !s.ok()) return StepResult::Fatal(s.message());
  // The walltime covers setup, launch and finish.
  t0_ = std::chrono::steady_clock::now();
  walltime_end_ = t0_ + std::chrono::seconds(lease.walltime_s > 0 ? lease.walltime_s : 1LL << 40);
  if (in_.events) in_.events->Start(lease);
  if (auto failed = RunPart(StepPart::kSetup, {})) {
    if (in_.events) in_.events->End(lease, "setup failed");
    return failed;
  }
  LaunchContext launch = launch_;
  if (direct) launch.backend = Backend::kLocal;
  auto plan = BuildLaunch(launch, *in_.command, lease, in_.placement);
  if (!plan.ok()) return NotStarted(plan.status());
  plan_ = std::move(*plan);
  return std::nullopt;
}

SpawnSpec LaunchedStep::spawn_spec() const {
  const std::string& dir = launch_.attempt_dir;
  // With a lease token (in lease.json) no process of the step needs the key:
  // srun and mpirun do not get it either, so no step reads it from their
  // /proc/PID/environ. Without one (a coordinator that issues none) rank 0
  // takes the lease over with the key, as before.
  const bool keyless = plan_.keyless || !ctx_.lease().lease_token.empty();
  return {plan_.argv, plan_.env, dir, dir + "/" + kStepOutFileName, dir + "/" + kStepErrFileName, plan_.pin,
          keyless};
}

WatchParams LaunchedStep::watch_params() const {
  WatchParams p;
  p.ctx = &ctx_;
  p.dir_fd = dir_fd_.get();
  p.walltime_end = walltime_end_;
  p.kill_grace = in_.kill_grace;
  const int64_t ttl = ctx_.lease().lease_ttl_ms;
  p.silence_limit = std::chrono::milliseconds(ttl > 0 ? ttl : 30000);
  if (NetworkFilesystem(dir_fd_.get())) p.state_poll = in_.poll;
  return p;
}

StepResult LaunchedStep::NotStarted(const Status& spawn_error) {
  if (in_.events) in_.events->End(ctx_.lease(), "not started");
  // A single-rank step runs on its placement's one node (forked here, or by
  // that node's agent).
  const auto& nodes = in_.placement.nodes;
  return DescribeNotStarted(spawn_error, nodes.size() == 1 ? nodes[0].name : HostName());
}

StepResult LaunchedStep::AgentGone(const std::string& why) {
  if (in_.events) in_.events->End(ctx_.lease(), "not started");
  if (in_.allocation_end != nullptr && in_.allocation_end->marked()) {
    return StepResult::Failure(FailClass::kPreempted, "the allocation is ending; the step could not be started: " + why);
  }
  return StepResult::Retryable("the step could not be started: " + why);
}

bool LaunchedStep::EndedByTheAllocation(const ExitInfo& exit) const {
  return in_.allocation_end != nullptr && in_.allocation_end->EndedTheStep(exit);
}

StepResult LaunchedStep::AllocationEnded(const ExitInfo& exit, const std::string& during) {
  // A node of the step died: SLURM ended the job for it (NODE_FAIL).
  std::vector<std::string> nodes;
  for (const auto& n : in_.placement.nodes) nodes.push_back(n.name);
  if (in_.allocation_end != nullptr) {
    if (std::string dead = in_.allocation_end->DeadNodeOf(nodes); !dead.empty()) {
      return StepResult::Failure(FailClass::kNodeFailure, "node " + dead +
                                                              " of the step died (SLURM marked it down and ended the "
                                                              "allocation); the step ended" +
                                                              during + ": " + exit.Describe());
    }
  }
  return StepResult::Failure(FailClass::kPreempted,
                             "the allocation is ending (SLURM signalled it); the step ended" + during + ": " +
                                 exit.Describe());
}

StepResult LaunchedStep::Conclude(const WatchEnd& end) {
  const Lease& lease = ctx_.lease();
  const int dfd = dir_fd_.get();
  const uid_t me = ::geteuid();
  StopCause cause = end.cause;
  const ExitInfo& exit = end.exit;
  // The process may have ended before the watch saw what rank 0 wrote.
  if (LostByRankZero(ctx_, dfd, end.rank0_held)) cause = StopCause::kLeaseLost;
  // SLURM is ending the allocation and signalled the step with it
  // (scancel, time limit): not the step's failure; requeued without
  // spending an attempt, and no finish (it would be signalled too).
  const bool allocation_ended = cause == StopCause::kNone && EndedByTheAllocation(exit);
  // Finish runs after the launch ended by itself, failed or not; the
  // launch's own failure is reported first.
  std::optional<StepResult> finish_failed;
  if (cause == StopCause::kNone && !allocation_ended) {
    finish_failed = RunPart(StepPart::kFinish, {{"SCIMESH_LAUNCH_EXIT", ShellExitStatus(exit)}});
  }
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  ctx_.SetUsage("wall_s", wall_s);
  if (in_.events) in_.events->End(lease, exit.Describe());

  if (cause != StopCause::kNone) return StoppedBy(cause, lease);
  if (allocation_ended) return AllocationEnded(exit, "");
  // The step's own word on why it failed comes before how its processes ended.
  if (auto reported = ReportedFailure(dfd)) return *reported;
  if (exit.signaled || exit.code != 0) {
    auto err = ReadAttemptFileTail(dfd, kStepErrFileName, me, kMaxStepErrTailBytes);
    const std::string node = in_.placement.nodes.empty() ? std::string() : in_.placement.nodes.front().name;
    if (auto oom = MemoryLimitFailure(exit, err.ok() ? *err : "", node, AllocationMemoryPerNodeMib())) return *oom;
    // srun refused the step because the job is ending (its time limit came
    // early, or a cancel): requeued without spending the step's budget, and
    // this launcher claims nothing more (found by tests/chaos).
    if (err.ok() && SrunFoundAllocationEnding(*err)) {
      if (in_.allocation_ending) in_.allocation_ending();
      return StepResult::Failure(FailClass::kPreempted, "srun could not start the step: the allocation is ending");
    }
    const std::string& launched = plan_.argv.front();
    return DescribeFailedLaunch({exit, err.ok() ? *err : "", in_.command, launched.substr(launched.rfind('/') + 1)});
  }
  if (finish_failed) return *finish_failed;
  return Collect(ctx_, dfd);
}

}  // namespace scimesh::launcher

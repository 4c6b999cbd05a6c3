// The launched step as a body: spawn, watch, stop, collect.
#include "launcher/step_body.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

#include "launcher/step_process.h"
#include "protocol/host_name.h"
#include "protocol/atomic_file.h"
#include "protocol/lease_state.h"
#include "protocol/log.h"

namespace scimesh::launcher {
namespace {

std::shared_ptr<spdlog::logger> Log() { return log::For("launcher"); }


std::optional<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// srun, mpirun and shells exit 128 + N when a process they ran died of
// signal N: name the signal, which is what the user needs to know.
std::string DescribeLauncherExit(const ExitInfo& e) {
  std::string text = e.Describe();
  if (!e.signaled && e.code > 128 && e.code <= 128 + 64) {
    const int sig = e.code - 128;
    const char* name = strsignal(sig);
    text += " (a rank was killed by signal " + std::to_string(sig) + " (" + (name != nullptr ? name : "unknown") + "))";
  }
  return text;
}

// The first rank that died on its own, as srun or mpirun reported it in
// step.err ("task 2 on n2: Segmentation fault"); ranks that were terminated
// because of it are skipped. Node names and signal names only: no paths.
std::optional<std::string> FirstRankFailure(const std::string& step_err) {
  static const std::regex srun(R"(srun: error: ([A-Za-z0-9._-]+): tasks? ([0-9-]+): ([A-Za-z ()0-9]+))");
  static const std::regex mpirun(R"(process rank ([0-9]+) with PID [0-9]+ on node ([A-Za-z0-9._-]+) exited on signal ([0-9]+) \(([A-Za-z ]+)\))");
  std::istringstream lines(step_err);
  std::string line;
  std::smatch m;
  while (std::getline(lines, line)) {
    if (std::regex_search(line, m, srun)) {
      const std::string what = m[3];
      if (what.rfind("Terminated", 0) == 0 || what.rfind("Killed", 0) == 0) continue;
      return "task " + m[2].str() + " on " + m[1].str() + ": " + what;
    }
    if (std::regex_search(line, m, mpirun)) {
      return "rank " + m[1].str() + " on " + m[2].str() + ": signal " + m[3].str() + " (" + m[4].str() + ")";
    }
  }
  return std::nullopt;
}

// Why the watch loop stopped the step (none: it exited by itself).
enum class StopCause { kNone, kLeaseLost, kWalltime, kPreempted, kRankZeroSilent };

// Declares every regular, non-hidden file in artifacts/ (with the media type
// a scimesh_step_add_artifact sidecar gives, else octet-stream).
Status DeclareArtifacts(StepContext& ctx) {
  const std::string dir = ctx.attempt_dir() + "/artifacts";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return Status::Ok();  // no artifacts
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    names.emplace_back(e->d_name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    struct stat st;
    if (::lstat((dir + "/" + name).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    std::string media = ReadSmallFile(dir + "/." + name + ".media-type").value_or("application/octet-stream");
    SCIMESH_RETURN_IF_ERROR(ctx.AddArtifact(name, media).WithContext("artifact " + name));
  }
  return Status::Ok();
}

StepResult Collect(StepContext& ctx) {
  const std::string dir = ctx.attempt_dir();
  if (auto patch = ReadSmallFile(dir + "/state_patch.json")) {
    if (Status s = ctx.SetStatePatch(*patch); !s.ok()) {
      return StepResult::Failure(FailClass::kInvalidOutput, "state_patch.json: " + s.message());
    }
  }
  if (auto usage = ReadSmallFile(dir + "/usage.json")) {
    rapidjson::Document d;
    d.Parse(usage->c_str());
    if (d.IsObject()) {
      for (const auto& kv : d.GetObject()) {
        if (kv.value.IsNumber()) ctx.SetUsage(kv.name.GetString(), kv.value.GetDouble());
      }
    }
  }
  if (Status s = DeclareArtifacts(ctx); !s.ok()) return StepResult::Failure(FailClass::kInvalidOutput, s.message());
  auto output = ReadSmallFile(dir + "/output.json");
  if (!output || output->find_first_not_of(" \t\r\n") == std::string::npos) {
    return StepResult();  // an empty result: RunLease fails it invalid_output
  }
  return StepResult::Output(*output);
}

}  // namespace

StepResult RunLaunchedStep(StepContext& ctx, const StepLaunch& in) {
  const Lease& lease = ctx.lease();
  LaunchContext launch = in.launch;
  launch.attempt_dir = ctx.attempt_dir();
  const std::string dir = launch.attempt_dir;

  if (Status s = WriteFileAtomically(dir + "/placement.json", PlacementJson(in.placement), 0644); !s.ok()) {
    return StepResult::Retryable("placement.json: " + s.message());
  }
  auto plan = BuildLaunch(launch, *in.command, lease, in.placement);
  if (!plan.ok()) return StepResult::Fatal(plan.status().message());
  auto proc = StepProcess::Spawn({plan->argv, plan->env, dir, dir + "/step.out", dir + "/step.err"});
  if (!proc.ok()) return StepResult::Fatal(proc.status().message());
  if (in.events) in.events->Start(lease);
  Log()->info("lease {} (step {}, attempt {}): started on {}", lease.lease_id, lease.step_id, lease.attempt,
              DescribePlacement(in.placement));

  const auto t0 = std::chrono::steady_clock::now();
  const auto walltime = std::chrono::seconds(lease.walltime_s > 0 ? lease.walltime_s : 1LL << 40);
  const auto silence_limit = std::chrono::milliseconds(lease.lease_ttl_ms > 0 ? lease.lease_ttl_ms : 30000);
  const std::string state_path = dir + "/lease.state";
  bool rank0_holds = false;
  bool rank0_lost = false;  // rank 0 found the lease lost: nothing to take back
  int64_t last_seq = -1;
  auto last_seq_change = t0;
  StopCause cause = StopCause::kNone;
  std::optional<ExitInfo> exit;

  while (!(exit = proc->WaitFor(in.poll))) {
    const auto now = std::chrono::steady_clock::now();
    if (ctx.cancelled()) cause = StopCause::kLeaseLost;
    else if (now - t0 > walltime) cause = StopCause::kWalltime;
    else if (in.preempt != nullptr && in.preempt->load()) cause = StopCause::kPreempted;
    if (auto state = ReadLeaseState(state_path); state.ok()) {
      if (state->seq != last_seq) {
        last_seq = state->seq;
        last_seq_change = now;
      }
      if (state->holder == "rank0") {
        if (!rank0_holds && state->state == LeaseHold::kHeld) {
          rank0_holds = true;
          ctx.PauseHeartbeats();  // one heartbeat stream per step: rank 0's
          Log()->info("lease {}: rank 0 holds the lease now", lease.lease_id);
        }
        if (state->state == LeaseHold::kLost && !rank0_lost) {
          cause = StopCause::kLeaseLost;
          rank0_lost = true;
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
  if (rank0_holds && !rank0_lost) {
    // Rank 0's deadline counts when it was measured on this host's clock.
    std::optional<LeaseDeadline> deadline;
    if (auto state = ReadLeaseState(state_path); state.ok() && state->host == HostName() && state->deadline_mono_ms > 0) {
      deadline = LeaseDeadline::At(MonoTime(std::chrono::milliseconds(state->deadline_mono_ms)));
    }
    ctx.ResumeHeartbeats(deadline);
  }
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ctx.SetUsage("wall_s", wall_s);
  if (in.events) in.events->End(lease, exit->Describe());

  switch (cause) {
    case StopCause::kLeaseLost:
      // Not sent: the token is cancelled, so RunLease abandons the lease.
      return StepResult::Retryable("the lease was lost; the step was stopped");
    case StopCause::kWalltime:
      return StepResult::Failure(FailClass::kTimeout, "the step ran past its walltime of " +
                                                          std::to_string(lease.walltime_s) + " s and was stopped");
    case StopCause::kPreempted:
      return StepResult::Failure(FailClass::kPreempted, "the allocation is ending; the step was stopped");
    case StopCause::kRankZeroSilent:
      return StepResult::Retryable("rank 0 stopped heartbeating; the step was stopped");
    case StopCause::kNone:
      break;
  }
  if (exit->signaled || exit->code != 0) {
    std::string why = DescribeLauncherExit(*exit);
    if (auto first = FirstRankFailure(ReadSmallFile(dir + "/step.err").value_or(""))) why += "; first failure: " + *first;
    return StepResult::Retryable("the step failed: " + why + " (see step.err in its attempt directory)");
  }
  return Collect(ctx);
}

}  // namespace scimesh::launcher

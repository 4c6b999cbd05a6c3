// Remote context (slurmstepd): on the node that hosts rank 0, watch the lease
// once every local task is forked; at the step's end, stop the watcher and,
// when SLURM ended the job while the lease was still held, report it.
#include <signal.h>
#include <unistd.h>

#include <memory>

#include <algorithm>

#include "plugin/bounded_call.h"
#include "plugin/ending_report.h"
#include "plugin/lease_files.h"
#include "plugin/lease_watch.h"
#include "plugin/plugin_state.h"
#include "plugin/slurm_calls.h"
#include "plugin/spank_log.h"
#include "protocol/attempt/attempt_files.h"
#include "protocol/attempt/lease_state.h"
#include "protocol/util/host_name.h"

namespace scimesh::spank {
namespace {

// One step (one slurmstepd) at a time.
struct StepSession {
  bool active = false;  // the step carries a lease and the config is valid
  LeaseTarget target;
  JobOwner owner;
  uint32_t job_id = 0;
  uint32_t step_id = 0;
  uint32_t local_tasks = 0;
  uint32_t forked = 0;
  bool hosts_rank0 = false;
  std::string worker_id, token_file, token_env;
  std::chrono::milliseconds owner_cancel_grace{0};
  std::optional<LeaseFiles> files;
  std::unique_ptr<LeaseWatch> watch;
};

StepSession& Session() {
  static StepSession s;
  return s;
}

std::string JobEnv(spank_t sp, const char* name) {
  char buf[8192];
  if (spank_getenv(sp, name, buf, sizeof buf) != ESPANK_SUCCESS) return {};
  return buf;
}

void StartWatch(StepSession& s, const PluginConfig& config) {
  auto files = OpenLeaseFiles(s.target, s.owner);
  if (!files.ok()) {
    LogError("step runs unwatched: " + files.status().message());
    return;
  }
  s.files = std::move(files).value();
  auto dir = OpenOwnedDirectory(s.target.attempt_dir, s.owner, "attempt directory");
  if (!dir.ok()) {
    LogError("step runs unwatched: " + dir.status().message());
    return;
  }
  const Lease& lease = s.files->lease();
  WatchSpec spec;
  spec.lease_id = lease.lease_id;
  spec.attempt = lease.attempt;
  spec.lease_ttl_ms = lease.lease_ttl_ms;
  spec.host = HostName();
  spec.owner = s.owner;
  spec.poll = config.poll;
  spec.grace = config.grace;
  spec.owner_cancel_grace = s.owner_cancel_grace;
  uint32_t job = s.job_id, step = s.step_id;
  auto watch = LeaseWatch::Start(std::move(spec), std::move(dir).value(),
                                 [job, step](int sig) { return SignalJobStep(job, step, sig); });
  if (!watch.ok()) {
    LogError("step runs unwatched: " + watch.status().message());
    return;
  }
  s.watch = std::move(watch).value();
  LogInfo("watching lease " + lease.lease_id + " attempt " + std::to_string(lease.attempt) + " for step " +
          std::to_string(job) + "." + std::to_string(step));
}

// The lease is still held (no final report, not lost): did SLURM end the job?
// Reported to the plugstack url= only, within `budget`.
void ReportEndingIfNeeded(StepSession& s, const PluginConfig& config, std::chrono::milliseconds budget) {
  if (!s.files || config.credentials == Credentials::kNone) return;
  const std::string lease_id = s.files->lease().lease_id;
  auto url = ReportUrl(config, s.files->file);
  if (!url.ok()) {
    // Without url= the plugin never opens a connection; a planted
    // coordinator_url is refused. Either way: no slurmctld query, no report.
    if (url.status().code() == Code::kNotFound) LogDebug("lease " + lease_id + ": " + url.status().message());
    else LogError("lease " + lease_id + " not reported: " + url.status().message());
    return;
  }
  auto text = ReadOwnedFileAt(s.files->dir.get(), kLeaseStateFileName, s.owner, kMaxStateFileBytes, false,
                              kLeaseStateFileName);
  if (text.ok()) {
    auto state = ParseLeaseState(text.value());
    if (state.ok() && state->state != LeaseHold::kHeld) return;  // lost or done: settled elsewhere
  }
  if (s.worker_id.empty()) {
    LogError("lease " + lease_id + " not reported: SCIMESH_WORKER_ID missing");
    return;
  }
  // The lease's own token (lease.json, read as the job's owner); the worker
  // key from the job's environment only when the coordinator issued none.
  Result<Token> token = Status::NotFound("no lease_token in lease.json, and no SCIMESH_TOKEN_FILE or SCIMESH_TOKEN "
                                         "in the job's environment");
  if (!s.files->lease().lease_token.empty()) {
    token = TokenFromText(s.files->lease().lease_token);
  } else if (!s.token_file.empty()) {
    auto t = ReadOwnedFile(s.token_file, s.owner, 4096, true, "SCIMESH_TOKEN_FILE");
    token = t.ok() ? TokenFromText(t.value()) : Result<Token>(t.status());
  } else if (!s.token_env.empty()) {
    token = TokenFromText(s.token_env);
  }
  if (!token.ok()) {
    LogError("lease " + lease_id + " not reported: " + token.status().message());
    return;
  }
  // slurmctld and the coordinator may both be slow: everything below runs on
  // a thread of its own, owning copies, waited for at most the budget.
  const auto until = std::chrono::steady_clock::now() + budget;
  ReportTarget target{token.value(), s.worker_id, lease_id, s.files->lease().attempt};
  const uint32_t job_id = s.job_id;
  bool in_time = RunWithin(
      [config, file = s.files->file, target, job_id, until, budget] {
        auto ending = QueryJobEnding(job_id);
        if (!ending.ok()) {
          LogError("cannot tell how job " + std::to_string(job_id) + " ended: " + ending.status().message());
          return;
        }
        auto cls = FailClassFor(ending.value());
        if (!cls) return;  // the job goes on: the launcher reports the step itself
        const std::string message = "SLURM ended job " + std::to_string(job_id) + " (" +
                                    std::string(SlurmEndingName(ending.value())) + ") while the step held its lease";
        // A tenth of the budget is kept for the outcome's log line: the wait
        // below ends at `until`, and a report ending there would race it.
        const auto left = std::chrono::duration_cast<Millis>(until - budget / 10 - std::chrono::steady_clock::now());
        Status st = ReportEnding(config, file, target, *cls, message, left);
        if (st.ok()) {
          LogInfo("reported lease " + target.lease_id + " as " + std::string(FailClassName(*cls)) + ": " + message);
        } else {
          LogError("cannot report lease " + target.lease_id + ": " + st.message());
        }
      },
      budget);
  if (!in_time) LogError("lease " + lease_id + ": the ending report did not finish within exit_timeout_ms; not waited for");
}

}  // namespace

int RemoteUserInit(spank_t sp, PluginState& state) {
  StepSession& s = Session();
  std::optional<std::string> value = state.option;
  if (!value) {
    std::string env = JobEnv(sp, kLeaseEnvFallback);
    if (!env.empty()) value = env;
  }
  if (!value) return 0;  // no lease: this step is none of our business
  if (!state.config) {
    LogError("step runs unwatched: invalid plugstack arguments (" + state.config_error + ")");
    return 0;
  }
  auto target = ParseLeaseOption(*value);
  if (target.ok()) target = ResolveLeaseTarget(target.value(), JobEnv(sp, kAttemptDirEnv));
  if (!target.ok()) {
    LogError("step runs unwatched: --scimesh-lease: " + target.status().message());
    return 0;
  }
  if (!CanSignalJobSteps()) {
    LogError("step runs unwatched: this process cannot signal job steps");
    return 0;
  }
  s.target = std::move(target).value();
  if (spank_get_item(sp, S_JOB_UID, &s.owner.uid) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_GID, &s.owner.gid) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_ID, &s.job_id) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_STEPID, &s.step_id) != ESPANK_SUCCESS ||
      spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &s.local_tasks) != ESPANK_SUCCESS) {
    LogError("step runs unwatched: SLURM did not say which job, step or user this is");
    return 0;
  }
  s.worker_id = JobEnv(sp, "SCIMESH_WORKER_ID");
  // A run cancelled by its owner gets scimesh-launch's --kill-grace, as it
  // does without the plugin; a step started otherwise gets grace_s.
  s.owner_cancel_grace = state.config->grace;
  if (std::string grace = JobEnv(sp, kKillGraceEnv); !grace.empty()) {
    auto parsed = ParseKillGraceMs(grace);
    if (parsed.ok()) s.owner_cancel_grace = parsed.value();
    else LogError(parsed.status().message() + "; a cancelled run gets grace_s");
  }
  if (state.config->credentials == Credentials::kJobEnvironment) {
    s.token_file = JobEnv(sp, "SCIMESH_TOKEN_FILE");
    if (s.token_file.empty()) s.token_env = JobEnv(sp, "SCIMESH_TOKEN");
  }
  s.active = true;
  return 0;
}

int RemoteTaskPostFork(spank_t sp, PluginState& state) {
  StepSession& s = Session();
  if (!s.active) return 0;
  uint32_t global_id = 0;
  if (spank_get_item(sp, S_TASK_GLOBAL_ID, &global_id) == ESPANK_SUCCESS && global_id == 0) s.hosts_rank0 = true;
  // The watcher starts once, after the last local task is forked: a thread
  // started earlier would be inherited by no one, but forks copy its locks.
  if (++s.forked == s.local_tasks && s.hosts_rank0 && !s.watch) StartWatch(s, *state.config);
  return 0;
}

int RemoteExit(spank_t /*sp*/, PluginState& state) {
  StepSession& s = Session();
  if (!s.active) return 0;
  // The whole hook returns within exit_timeout_ms: a hung slurmstepd hangs
  // the step's end and, after UnkillableStepTimeout, drains the node.
  const auto start = std::chrono::steady_clock::now();
  const std::chrono::milliseconds budget = state.config ? state.config->exit_timeout : std::chrono::seconds(5);
  auto left = [&] {
    return std::max(std::chrono::milliseconds(0),
                    budget - std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start));
  };
  bool cancelled_by_us = false;
  if (s.watch) {
    // At most a fifth of the budget: the watcher only sleeps or signals.
    s.watch->Stop(std::min(left(), budget / 5));
    cancelled_by_us = s.watch->cancelled();
    s.watch.reset();  // safe even while its thread still runs: it owns its state
  }
  if (s.hosts_rank0 && !cancelled_by_us && state.config) ReportEndingIfNeeded(s, *state.config, left());
  s = StepSession{};
  return 0;
}

}  // namespace scimesh::spank

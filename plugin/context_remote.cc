// Remote context (slurmstepd): on the node that hosts rank 0, watch the lease
// once every local task is forked; at the step's end, stop the watcher and,
// when SLURM ended the job while the lease was still held, report it.
#include <signal.h>
#include <unistd.h>

#include <memory>

#include "plugin/ending_report.h"
#include "plugin/lease_files.h"
#include "plugin/lease_watch.h"
#include "plugin/plugin_state.h"
#include "plugin/spank_log.h"
#include "plugin/step_signal.h"
#include "protocol/lease_state.h"

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

std::string Hostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return {};
  return buf;
}

void StartWatch(StepSession& s, const PluginConfig& config) {
  auto files = OpenLeaseFiles(s.target, s.owner);
  if (!files.ok()) {
    LogError("step " + std::to_string(s.job_id) + "." + std::to_string(s.step_id) +
             " runs unwatched: " + files.status().message());
    return;
  }
  s.files = std::move(files).value();
  auto dir = OpenOwnedDirectory(s.target.attempt_dir, s.owner, "attempt directory");
  if (!dir.ok()) {
    LogError("step runs unwatched: " + dir.status().message());
    return;
  }
  WatchSpec spec;
  spec.lease_id = s.files->lease.lease_id;
  spec.attempt = s.files->lease.attempt;
  spec.lease_ttl_ms = s.files->lease.lease_ttl_ms;
  spec.host = Hostname();
  spec.owner = s.owner;
  spec.poll = config.poll;
  spec.grace = config.grace;
  uint32_t job = s.job_id, step = s.step_id;
  auto watch = LeaseWatch::Start(std::move(spec), std::move(dir).value(),
                                 [job, step](int sig) { return SignalJobStep(job, step, sig); });
  if (!watch.ok()) {
    LogError("step runs unwatched: " + watch.status().message());
    return;
  }
  s.watch = std::move(watch).value();
  LogInfo("watching lease " + s.files->lease.lease_id + " attempt " + std::to_string(s.files->lease.attempt) +
          " for step " + std::to_string(job) + "." + std::to_string(step));
}

// The lease is still held (no final report, not lost): did SLURM end the job?
void ReportEndingIfNeeded(StepSession& s, const PluginConfig& config) {
  if (!s.files || config.credentials == Credentials::kNone) return;
  auto text = ReadOwnedFileAt(s.files->dir.get(), "lease.state", s.owner, 64 * 1024, false, "lease.state");
  if (text.ok()) {
    auto state = ParseLeaseState(text.value());
    if (state.ok() && state->state != LeaseHold::kHeld) return;  // lost or done: settled elsewhere
  }
  auto ending = QueryJobEnding(s.job_id);
  if (!ending.ok()) {
    LogError("cannot tell how job " + std::to_string(s.job_id) + " ended: " + ending.status().message());
    return;
  }
  auto cls = FailClassFor(ending.value());
  if (!cls) return;  // the job goes on: the launcher reports the step itself
  if (s.worker_id.empty() || s.files->coordinator_url.empty()) {
    LogError("lease " + s.files->lease.lease_id + " not reported: SCIMESH_WORKER_ID or coordinator_url missing");
    return;
  }
  Result<Token> token = Status::NotFound("no SCIMESH_TOKEN_FILE or SCIMESH_TOKEN in the job's environment");
  if (!s.token_file.empty()) {
    auto t = ReadOwnedFile(s.token_file, s.owner, 4096, true, "SCIMESH_TOKEN_FILE");
    token = t.ok() ? TokenFromText(t.value()) : Result<Token>(t.status());
  } else if (!s.token_env.empty()) {
    token = TokenFromText(s.token_env);
  }
  if (!token.ok()) {
    LogError("lease " + s.files->lease.lease_id + " not reported: " + token.status().message());
    return;
  }
  ReportTarget target{s.files->coordinator_url, token.value(), s.worker_id, s.files->lease.lease_id,
                      s.files->lease.attempt};
  std::string message = "SLURM ended job " + std::to_string(s.job_id) + " (" +
                        std::string(SlurmEndingName(ending.value())) + ") while the step held its lease";
  Status st = ReportEnding(target, config, *cls, message);
  if (st.ok()) {
    LogInfo("reported lease " + target.lease_id + " as " + std::string(FailClassName(*cls)) + ": " + message);
  } else {
    LogError("cannot report lease " + target.lease_id + ": " + st.message());
  }
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
  bool cancelled_by_us = false;
  if (s.watch) {
    s.watch->Stop(std::chrono::seconds(15));
    cancelled_by_us = s.watch->cancelled();
    s.watch.reset();
  }
  if (s.hosts_rank0 && !cancelled_by_us && state.config) ReportEndingIfNeeded(s, *state.config);
  s = StepSession{};
  return 0;
}

}  // namespace scimesh::spank

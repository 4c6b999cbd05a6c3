// slurmctld's view of the job, and the fail report built from it.
#include "plugin/ending_report.h"

#include <slurm/slurm.h>

#include <algorithm>

#include "plugin/slurm_calls.h"
#include "plugin/spank_log.h"
#include "protocol/client/client.h"
#include "protocol/util/url.h"

namespace scimesh::spank {

Result<SlurmEnding> QueryJobEnding(uint32_t job_id) {
  SCIMESH_ASSIGN_OR_RETURN(uint32_t state, LoadJobState(job_id));
  switch (state & JOB_STATE_BASE) {
    case JOB_CANCELLED: return SlurmEnding::kCancelled;
    case JOB_TIMEOUT:
    case JOB_DEADLINE: return SlurmEnding::kTimeLimit;
    case JOB_NODE_FAIL: return SlurmEnding::kNodeFailure;
    case JOB_PREEMPTED: return SlurmEnding::kPreempted;
    default: return SlurmEnding::kNone;
  }
}

std::optional<FailClass> FailClassFor(SlurmEnding ending) {
  switch (ending) {
    // A whole job cancelled is its allocation ending, as a time limit or a
    // preemption is: not the step's fault, and what the launcher reports
    // without the plugin (its SIGTERM) -- requeued at once, no attempt spent.
    case SlurmEnding::kCancelled:
    case SlurmEnding::kTimeLimit:
    case SlurmEnding::kPreempted: return FailClass::kPreempted;
    case SlurmEnding::kNodeFailure: return FailClass::kNodeFailure;
    case SlurmEnding::kNone: break;
  }
  return std::nullopt;
}

std::string_view SlurmEndingName(SlurmEnding ending) {
  switch (ending) {
    case SlurmEnding::kCancelled: return "cancelled";
    case SlurmEnding::kTimeLimit: return "time limit";
    case SlurmEnding::kNodeFailure: return "node failure";
    case SlurmEnding::kPreempted: return "preempted";
    case SlurmEnding::kNone: break;
  }
  return "none";
}

Result<Token> TokenFromText(const std::string& text) {
  if (text.size() > 4096) return Status::InvalidArgument("token: larger than 4 KiB");
  auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return Status::InvalidArgument("token: empty");
  auto last = text.find_last_not_of(" \t\r\n");
  std::string word = text.substr(first, last - first + 1);
  bool visible = std::all_of(word.begin(), word.end(), [](unsigned char c) { return c > 0x20 && c < 0x7f; });
  if (!visible) return Status::InvalidArgument("token: not one word of visible ASCII");
  return Token(std::move(word));
}

Result<std::string> ReportUrl(const PluginConfig& config, const LeaseFile& lease_file) {
  if (!config.url) {
    return Status::NotFound("no url= in the plugstack arguments: the plugin never reports");
  }
  SCIMESH_RETURN_IF_ERROR(CheckLeaseFileOrigin(lease_file, *config.url));
  return *config.url;
}

ClientOptions ReportClientOptions(const PluginConfig& config, std::string url, const Token& token, Millis budget) {
  ClientOptions o;
  o.coordinator_url = std::move(url);
  o.token = token;
  o.allow_insecure_http = config.allow_insecure_http;
  o.call_timeout = std::max(Millis(0), std::min(config.call_timeout, budget));
  o.connect_timeout = std::min<Millis>(Millis(2000), o.call_timeout);
  // The client makes one last try when its retry budget ends, and a try may
  // take call_timeout: a retry budget of the whole budget would end the
  // report up to a try past it, where exit_timeout_ms no longer waits.
  o.retry_budget = std::max(Millis(0), budget - o.call_timeout);
  o.backoff.cap = Millis(1000);
  o.user_agent = "spank_scimesh/0.1";
  return o;
}

Status ReportEnding(const PluginConfig& config, const LeaseFile& lease_file, const ReportTarget& target, FailClass cls,
                    const std::string& message, Millis budget) {
  SCIMESH_ASSIGN_OR_RETURN(std::string url, ReportUrl(config, lease_file));
  if (budget <= Millis(0)) return Status::Timeout("no time left to report");
  SCIMESH_ASSIGN_OR_RETURN(auto client, Client::Create(ReportClientOptions(config, std::move(url), target.token, budget)));
  LeaseCall call;
  call.lease_id = target.lease_id;
  call.attempt = target.attempt;
  call.worker_id = target.worker_id;
  SCIMESH_ASSIGN_OR_RETURN(auto reply, client->Fail(call, cls, message));
  if (reply.applied) return Status::Ok();
  const Refusal& r = *reply.refusal;
  if (r.reason == RefusalReason::kNotStarted) {
    return Status::Conflict("fail refused with not_started (the lease was never started)");
  }
  LogInfo("lease " + target.lease_id + ": the outcome was already settled (" +
          std::string(RefusalReasonName(r.reason)) + "); nothing more sent");
  return Status::Ok();
}

}  // namespace scimesh::spank

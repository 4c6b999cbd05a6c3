// SLURM's endings reach the coordinator: when SLURM ended the job (scancel,
// time limit, node failure, preemption) while the step still held its lease,
// the plugin sends `fail` for the lease, once, with short timeouts and the
// lease's own token, so the coordinator requeues at once instead of waiting
// for the TTL and grace.
//
// The plugin runs as root and the key goes where the URL points, so the URL
// is the plugstack `url=` only: never the coordinator_url of lease.json,
// which the step's code or another user may have written. Without `url=` the
// plugin never talks to the network.
//
// Thread-compatible free functions; a report blocks for at most its budget.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "plugin/plugin_config.h"
#include "protocol/attempt/lease_file.h"
#include "protocol/client/client.h"
#include "protocol/util/clock.h"
#include "protocol/util/status.h"
#include "protocol/util/token.h"
#include "protocol/wire/wire.h"

namespace scimesh::spank {

enum class SlurmEnding { kNone, kCancelled, kTimeLimit, kNodeFailure, kPreempted };

// The job's state from slurmctld (slurm_load_job, provided by the host
// process): kNone while the job still runs (a step-only ending, which the
// launcher reports itself) or ended on its own.
Result<SlurmEnding> QueryJobEnding(uint32_t job_id);

// How an ending is reported: time limit and preemption end the allocation
// (preempted: requeued at once); scancel is cancelled; a node failure is
// node_failure. kNone has no class.
std::optional<FailClass> FailClassFor(SlurmEnding ending);
std::string_view SlurmEndingName(SlurmEnding ending);

// The coordinator to report `lease_file`'s lease to: config.url.
// kNotFound without url= (the plugin then never reports);
// kPermissionDenied when lease.json names another origin (refused).
Result<std::string> ReportUrl(const PluginConfig& config, const LeaseFile& lease_file);

struct ReportTarget {
  Token token;
  std::string worker_id;
  std::string lease_id;
  int64_t attempt = 0;
};

// The client settings of a report to `url` within `budget`: each try gets
// the plugstack timeout_ms (no more than the budget), and retries stop one
// try's length before the budget ends, so that the last try, started when
// they stop, ends within it too. Pure.
ClientOptions ReportClientOptions(const PluginConfig& config, std::string url, const Token& token, Millis budget);

// Sends `fail` with `cls` and `message` to ReportUrl(config, lease_file),
// and nowhere else, within `budget` (connect, call and retries together).
// A 409 already_applied, fenced or run_terminal means the outcome was settled
// elsewhere: OK.
Status ReportEnding(const PluginConfig& config, const LeaseFile& lease_file, const ReportTarget& target, FailClass cls,
                    const std::string& message, Millis budget);

// A token file's content: one word of visible ASCII, at most 4 KiB.
Result<Token> TokenFromText(const std::string& text);

}  // namespace scimesh::spank

// SLURM's endings reach the coordinator: when SLURM ended the job (scancel,
// time limit, node failure, preemption) while the step still held its lease,
// the plugin sends `fail` for the lease, once, with short timeouts and the
// lease's own token, so the coordinator requeues at once instead of waiting
// for the TTL and grace.
//
// Thread-compatible free functions; each call blocks for at most about twice
// the configured call timeout.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "plugin/plugin_config.h"
#include "protocol/status.h"
#include "protocol/token.h"
#include "protocol/wire.h"

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

struct ReportTarget {
  std::string coordinator_url;
  Token token;
  std::string worker_id;
  std::string lease_id;
  int64_t attempt = 0;
};

// Sends `fail` with `cls` and `message`. A 409 already_applied, fenced or
// run_terminal means the outcome was settled elsewhere: OK. kPermissionDenied
// when config.url is set and names another coordinator.
Status ReportEnding(const ReportTarget& target, const PluginConfig& config, FailClass cls,
                    const std::string& message);

// A token file's content: one word of visible ASCII, at most 4 KiB.
Result<Token> TokenFromText(const std::string& text);

}  // namespace scimesh::spank

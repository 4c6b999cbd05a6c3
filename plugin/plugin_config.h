// The plugin's plugstack.conf arguments (url=, credentials=, grace_s=, ...):
// parsed the same way in every SPANK context; an unknown key is refused.
//
// Plain values and a pure parser; thread-safe.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/util/status.h"

namespace scimesh::spank {

// Where the credentials for the plugin's own reports come from.
enum class Credentials {
  kJobEnvironment,  // the lease's token: SCIMESH_TOKEN_FILE / SCIMESH_TOKEN of the job
  kNone,            // never report; only watch and cancel
};

struct PluginConfig {
  // The only coordinator the plugin ever talks to. Unset: the plugin never
  // opens a connection (it still cancels steps whose lease is lost). A
  // lease.json naming another origin is not reported for (and logged).
  std::optional<std::string> url;
  Credentials credentials = Credentials::kJobEnvironment;
  std::chrono::seconds grace{10};             // SIGTERM -> SIGKILL
  std::chrono::milliseconds poll{200};        // how often the watcher reads the lease state
  std::chrono::milliseconds call_timeout{5000};  // one report try; connect is min(2 s, this)
  // slurm_spank_exit returns within this, network and watcher stop included.
  std::chrono::milliseconds exit_timeout{5000};
  bool require = false;              // srun/sbatch refuse a --scimesh-lease they cannot read
  bool allow_insecure_http = false;  // plain http to a non-loopback coordinator
};

// The job's variable that carries scimesh-launch's --kill-grace (ms): the
// grace a run cancelled by its owner gets with the plugin, as without it.
inline constexpr char kKillGraceEnv[] = "SCIMESH_KILL_GRACE_MS";

// SCIMESH_KILL_GRACE_MS's value: an integer from 0 to 600000 (grace_s's
// range), else kInvalidArgument saying so.
Result<std::chrono::milliseconds> ParseKillGraceMs(std::string_view value);

// Parses `key=value` arguments. Unknown keys, repeated keys, empty or
// out-of-range values are kInvalidArgument naming the argument.
Result<PluginConfig> ParsePluginArgs(const std::vector<std::string_view>& args);

// "url=... grace_s=10 ..." for the log line that says what the plugin runs with.
std::string DescribeConfig(const PluginConfig& config);

}  // namespace scimesh::spank

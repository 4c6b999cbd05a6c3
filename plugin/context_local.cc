// Local (srun) and allocator (sbatch, salloc) contexts: refuse a bad
// --scimesh-lease with a clear message before anything is allocated.
#include <cstdlib>
#include <unistd.h>

#include "plugin/lease_files.h"
#include "plugin/lease_option.h"
#include "plugin/plugin_state.h"
#include "plugin/spank_log.h"

namespace scimesh::spank {

int LocalCheckLease(const std::string& value, const char* from, const PluginState& state) {
  if (!state.config) {
    LogError(std::string(from) + " cannot be honoured: the site's spank_scimesh configuration is invalid (" +
             state.config_error + "); ask your cluster administrator");
    return -1;
  }
  auto target = ParseLeaseOption(value);
  if (!target.ok()) {
    LogError(std::string(from) + ": " + target.status().message());
    return -1;
  }
  if (!state.config->require) return 0;
  // require=1: the lease must be readable here, by this user, before a node is touched.
  const char* dir_env = std::getenv(kAttemptDirEnv);
  auto resolved = ResolveLeaseTarget(target.value(), dir_env ? dir_env : "");
  if (!resolved.ok()) {
    LogError(std::string(from) + ": " + resolved.status().message());
    return -1;
  }
  auto files = OpenLeaseFiles(resolved.value(), JobOwner{::getuid(), ::getgid()});
  if (!files.ok()) {
    LogError(std::string(from) + ": " + files.status().message());
    return -1;
  }
  return 0;
}

int LocalInitPostOpt(spank_t /*sp*/, PluginState& state) {
  if (state.option) return 0;  // checked by the option's callback already
  const char* env = std::getenv(kLeaseEnvFallback);
  if (env == nullptr || *env == '\0') return 0;  // a job without a lease: untouched
  // SLURM ignores this hook's result for an `optional` plugin: the error is
  // printed, and the step runs unwatched (remote context says so too).
  return LocalCheckLease(env, kLeaseEnvFallback, state);
}

}  // namespace scimesh::spank

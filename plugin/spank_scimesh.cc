// spank_scimesh.so entry points: the only exported symbols. Each parses
// nothing itself; it catches every exception and dispatches on
// spank_context() to the file of that context.
// spank.h declares the hooks without C linkage when read by C++.
extern "C" {
#include <slurm/spank.h>
}
#include <slurm/slurm_errno.h>

#include <exception>
#include <string>
#include <vector>

#include "plugin/lease_option.h"
#include "plugin/plugin_config.h"
#include "plugin/plugin_state.h"
#include "plugin/slurm_calls.h"
#include "plugin/spank_log.h"
#include "protocol/util/version.h"

// The module is built with hidden visibility; these few are the exceptions
// (and spank_scimesh.map hides anything else that might slip through).
#define SCIMESH_SPANK_EXPORT __attribute__((visibility("default")))

extern "C" {
extern SCIMESH_SPANK_EXPORT const char plugin_name[];
extern SCIMESH_SPANK_EXPORT const char plugin_type[];
extern SCIMESH_SPANK_EXPORT const unsigned int plugin_version;
extern SCIMESH_SPANK_EXPORT const unsigned int spank_plugin_version;
SPANK_PLUGIN(scimesh, 1)
}

// 25.05 added slurm_spank_init_failure_mode, read when a `required` plugin's
// slurm_spank_init fails; its default, ESPANK_NODE_FAILURE, drains the node.
// Nothing this plugin meets (a dead coordinator, a bad plugstack argument, a
// missing spool) is the node's fault: the job fails, the node stays up.
// (slurm_spank_init never fails in slurmd or slurmstepd anyway; this is the
// second wall.) Defined here, in the module itself: the static library's
// symbols are hidden (--exclude-libs).
#if SCIMESH_SLURM_HAS_INIT_FAILURE_MODE
extern "C" SCIMESH_SPANK_EXPORT int slurm_spank_init_failure_mode;
int slurm_spank_init_failure_mode = ESPANK_JOB_FAILURE;
#endif

namespace scimesh::spank {
namespace {

// Runs `body`; an exception becomes a log line and `on_error`.
template <typename F>
int Guarded(const char* hook, int on_error, F&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    LogError(std::string(hook) + " failed: " + e.what());
  } catch (...) {
    LogError(std::string(hook) + " failed");
  }
  return on_error;
}

bool Remote() { return spank_context() == S_CTX_REMOTE; }

// Only a user's own command (srun, sbatch, salloc) may fail a hook; in
// slurmd, slurmstepd and the job script context every hook returns 0, so the
// plugin never fails a step or drains a node (23.11 fails the step on a SPANK
// error, 25.05 on any non-zero return). Where it may fail, it returns -1.
bool MayFail(spank_context_t ctx) { return ctx == S_CTX_LOCAL || ctx == S_CTX_ALLOCATOR; }

// Called by SLURM for --scimesh-lease in srun/sbatch, and in slurmstepd with
// remote=1: twice up to 23.11, once from 24.05 on, and not at all when 24.05+
// took the option from the launch message. So remote context never relies on
// it: user_init asks spank_option_getopt. Storing, never accumulating, keeps
// repeated calls harmless. Only the user's own command fails on a bad value.
int OnLeaseOption(int /*val*/, const char* optarg, int remote) {
  return Guarded("--scimesh-lease", remote ? 0 : -1, [&] {
    std::string value = optarg ? optarg : "";
    GlobalState().option = value;
    if (remote) return 0;  // checked again, without failing, in RemoteUserInit
    return LocalCheckLease(value, "--scimesh-lease", GlobalState());
  });
}

struct spank_option kLeaseOption = {
    const_cast<char*>(kLeaseOptionName),
    const_cast<char*>("DIR|LEASE"),
    const_cast<char*>("[scimesh] the attempt directory (or lease id) of the lease this job step holds; the step is "
                      "cancelled when the lease is lost (env fallback: SCIMESH_LEASE)"),
    1,
    0,
    OnLeaseOption,
};

}  // namespace

PluginState& GlobalState() {
  static PluginState state;
  return state;
}

}  // namespace scimesh::spank

using namespace scimesh::spank;

extern "C" SCIMESH_SPANK_EXPORT int slurm_spank_init(spank_t sp, int ac, char** av) {
  const spank_context_t ctx = spank_context();
  return Guarded("init", MayFail(ctx) ? -1 : 0, [&] {
    PluginState& state = GlobalState();
    std::vector<std::string_view> args(av, av + (ac > 0 ? ac : 0));
    auto config = scimesh::spank::ParsePluginArgs(args);
    if (config.ok()) {
      state.config = config.value();
    } else {
      state.config.reset();
      state.config_error = config.status().message();
      // Never fatal: a step without the option must not notice a
      // misconfigured plugin, and a node must not drain. The daemons log it
      // for the admin; srun/sbatch say it only to a user of the option.
      if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR) {
        LogError("invalid plugstack arguments, plugin disabled: " + state.config_error);
      }
    }
    if (ctx == S_CTX_LOCAL || ctx == S_CTX_REMOTE || ctx == S_CTX_ALLOCATOR) {
      spank_err_t rc = spank_option_register(sp, &kLeaseOption);
      if (rc != ESPANK_SUCCESS) {
        LogError(std::string("cannot register --scimesh-lease: ") + spank_strerror(rc));
        return MayFail(ctx) ? -1 : 0;
      }
    }
    if (ctx == S_CTX_REMOTE) RouteLibraryLogs();
    if (state.config && ctx == S_CTX_REMOTE) {
      LogDebug(scimesh::VersionLine("spank_scimesh") + ", configured: " + DescribeConfig(*state.config));
    }
    return 0;
  });
}

extern "C" SCIMESH_SPANK_EXPORT int slurm_spank_init_post_opt(spank_t sp, int /*ac*/, char** /*av*/) {
  const spank_context_t ctx = spank_context();
  if (ctx != S_CTX_LOCAL && ctx != S_CTX_ALLOCATOR) return 0;
  return Guarded("init_post_opt", -1, [&] { return LocalInitPostOpt(sp, GlobalState()); });
}

extern "C" SCIMESH_SPANK_EXPORT int slurm_spank_user_init(spank_t sp, int /*ac*/, char** /*av*/) {
  if (!Remote()) return 0;
  return Guarded("user_init", 0, [&] {
    // The value SLURM holds for the step wins over what a callback stored
    // (24.05+ may not call it here at all).
    char* given = nullptr;
    if (spank_option_getopt(sp, &kLeaseOption, &given) == ESPANK_SUCCESS && given != nullptr) {
      GlobalState().option = std::string(given);
    }
    return RemoteUserInit(sp, GlobalState());
  });
}

extern "C" SCIMESH_SPANK_EXPORT int slurm_spank_task_post_fork(spank_t sp, int /*ac*/, char** /*av*/) {
  if (!Remote()) return 0;
  return Guarded("task_post_fork", 0, [&] { return RemoteTaskPostFork(sp, GlobalState()); });
}

extern "C" SCIMESH_SPANK_EXPORT int slurm_spank_exit(spank_t sp, int /*ac*/, char** /*av*/) {
  if (!Remote()) return 0;
  return Guarded("exit", 0, [&] { return RemoteExit(sp, GlobalState()); });
}

// What the SPANK entry points share inside one process: the plugstack
// configuration and the --scimesh-lease value as given.
//
// One per process. SLURM calls the hooks of a plugin from one thread, so the
// state needs no lock; the watcher thread never touches it.
#pragma once

#include <optional>
#include <string>

// spank.h declares the hooks without C linkage when read by C++.
extern "C" {
#include <slurm/spank.h>
}

#include "plugin/plugin_config.h"

namespace scimesh::spank {

struct PluginState {
  std::optional<PluginConfig> config;  // nullopt: the plugstack arguments were refused
  std::string config_error;
  std::optional<std::string> option;   // --scimesh-lease as given (the last call wins)
};

PluginState& GlobalState();

// Local (srun) and allocator (sbatch, salloc) contexts: checks the lease the
// user named (`from`: the option or the environment variable) before anything
// is allocated. Non-zero: the error is printed; from the option's callback it
// stops srun/sbatch.
int LocalCheckLease(const std::string& value, const char* from, const PluginState& state);
// The SCIMESH_LEASE fallback when the option was not given.
int LocalInitPostOpt(spank_t sp, PluginState& state);

// Remote context (slurmstepd). Each returns 0 whatever happens: a failing
// remote hook would fail or drain the node.
int RemoteUserInit(spank_t sp, PluginState& state);
int RemoteTaskPostFork(spank_t sp, PluginState& state);
int RemoteExit(spank_t sp, PluginState& state);

}  // namespace scimesh::spank

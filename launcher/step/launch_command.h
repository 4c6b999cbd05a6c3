// LaunchCommand: the command line that starts one placed step -- `srun --exact`
// inside a SLURM allocation, `mpirun` or the program itself on a plain host --
// and the environment every rank gets.
#pragma once

#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "launcher/definitions/step_commands.h"
#include "launcher/placement/placement.h"
#include "protocol/util/status.h"
#include "protocol/wire/wire.h"

namespace scimesh::launcher {

enum class Backend { kSlurm, kLocal };

struct LaunchContext {
  Backend backend = Backend::kLocal;
  std::string attempt_dir;
  std::string rank_wrapper = "scimesh-rank";  // path of scimesh-rank
  std::string srun = "srun";
  std::string mpirun = "mpirun";
  bool spank_option = false;   // pass --scimesh-lease (resolved from --spank at start)
  std::map<std::string, std::string> env;  // SCIMESH_* for the step (no secrets)
  // The placement's PU indices are this machine's (not an XML or synthetic
  // stand-in for it): single ranks forked here are bound to them.
  bool bind = true;
  // Whether the environment the step inherits (this process's) sets `name`.
  std::function<bool(const std::string& name)> inherits = [](const std::string& name) {
    return std::getenv(name.c_str()) != nullptr;
  };
};

struct LaunchPlan {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;  // on top of the inherited environment
  // A single rank forked on its host without scimesh-rank (see BuildLaunch):
  std::vector<int> pin;  // the PUs to bind it to; empty: no binding
  bool keyless = false;  // the key's variables are not inherited
};

// On the local backend (and for a node agent, which is given a local plan),
// one rank is the program itself: no scimesh-rank, so no take-over (the
// launcher's own heartbeats keep the lease) and nothing to load before the
// program runs. The plan carries what the wrapper would have done: the PUs
// to bind it to, the rank's environment (protocol/rank_environment.h) and no
// key. A program linked with libscimesh_mpi (native) still gets the key.
//
// Pure function of its inputs (ctx.inherits is one); thread-safe.
Result<LaunchPlan> BuildLaunch(const LaunchContext& ctx, const StepCommand& cmd, const Lease& lease,
                               const Placement& placement);

}  // namespace scimesh::launcher

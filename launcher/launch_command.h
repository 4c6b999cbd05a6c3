// LaunchCommand: the command line that starts one placed step -- `srun --exact`
// inside a SLURM allocation, `mpirun` or the program itself on a plain host --
// and the environment every rank gets.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "launcher/placement.h"
#include "launcher/step_commands.h"
#include "protocol/status.h"
#include "protocol/wire.h"

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
};

struct LaunchPlan {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
};

// Pure function of its inputs; thread-safe.
Result<LaunchPlan> BuildLaunch(const LaunchContext& ctx, const StepCommand& cmd, const Lease& lease,
                               const Placement& placement);

}  // namespace scimesh::launcher

// Telling the allocation's memory limit from other SIGKILLs.
#include "launcher/step/memory_limit.h"

#include <cstdlib>
#include <cstring>
#include <regex>

namespace scimesh::launcher {
namespace {

constexpr char kWhatToDo[] =
    "; this allocation cannot give the step that much, so it is handed back for another "
    "(ask for more memory per node, e.g. sbatch --mem, or make the step use less)";

std::string Mib(int64_t mib) { return mib > 0 ? std::to_string(mib) + " MiB" : "no limit set"; }

}  // namespace

int64_t AllocationMemoryPerNodeMib() {
  const char* v = std::getenv("SLURM_MEM_PER_NODE");
  if (v == nullptr || *v == '\0' || std::strlen(v) > 12) return 0;
  int64_t mib = 0;
  for (const char* p = v; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9') return 0;
    mib = mib * 10 + (*p - '0');
  }
  return mib;
}

std::optional<StepResult> MemoryLimitFailure(const ExitInfo& exit, std::string_view step_err, const std::string& node,
                                             int64_t per_node_mib) {
  if (exit.memory_limit_mib != 0) {
    const std::string why = exit.memory_limit_mib > 0
                                ? "killed by the allocation's memory limit, " + Mib(exit.memory_limit_mib) + " on " + node
                                : "killed by the out-of-memory killer on " + node + " (" + Mib(-1) + ")";
    return StepResult::Failure(FailClass::kUnservable, "the step was " + why + kWhatToDo);
  }
  // srun names each task SLURM's cgroup found out of memory; slurmstepd
  // counts the kills ("Detected 1 oom-kill event(s)" in 22.05,
  // "oom_kill event" later) without naming the node.
  static const std::regex task_oom(R"(srun: error: ([A-Za-z0-9._-]{1,64}): tasks? [0-9,-]{1,64}: Out Of Memory)");
  static const std::regex stepd_oom(R"(Detected [0-9]+ oom[-_]kill event)");
  const std::string err(step_err);
  std::smatch m;
  if (std::regex_search(err, m, task_oom)) {
    return StepResult::Failure(FailClass::kUnservable,
                               "the step was killed by the allocation's memory limit" +
                                   (per_node_mib > 0 ? ", " + Mib(per_node_mib) : std::string()) + " on " +
                                   m[1].str() + " (SLURM: Out Of Memory)" + kWhatToDo);
  }
  if (std::regex_search(err, stepd_oom)) {
    return StepResult::Failure(FailClass::kUnservable,
                               "the step was killed by the allocation's memory limit on a node of the step "
                               "(SLURM counted an OOM kill)" + std::string(kWhatToDo));
  }
  return std::nullopt;
}

}  // namespace scimesh::launcher

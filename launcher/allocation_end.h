// AllocationEnd: whether SLURM told this launcher that its allocation is
// ending, and whether a step that failed died of that ending.
//
// scancel, a time limit or a preemption signal the batch step (this
// launcher) and every job step (srun's tasks, the node agents' children) at
// the same moment: a step killed that way did nothing wrong, and its lease
// fails `preempted` (requeued, no attempt spent), as the SPANK plugin
// reports it from slurmctld's job state.
//
// Thread-safety: every member from any thread (the signal thread marks it,
// pool threads ask it).
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "launcher/step/step_process.h"

namespace scimesh::launcher {

// The nodes `sinfo -h -N -o "%N %t"` prints as dead (a state starting with
// "down" or "fail"), among `ours`.
std::vector<std::string> DeadNodesIn(std::string_view sinfo_text, const std::vector<std::string>& ours);

class AllocationEnd {
 public:
  // How long a step's signal death may precede the launcher's own signal:
  // SLURM signals the batch step and the job steps in no set order.
  static constexpr std::chrono::milliseconds kSignalRace{1000};

  // SLURM said the allocation is ending (its SIGTERM reached the launcher,
  // or srun refused a step because the job is completing). One-way.
  void Mark();
  bool marked() const;

  // Nodes of the allocation SLURM had marked DOWN or FAIL when it ended it
  // (a node died: slurmctld ends the job with NODE_FAIL). Set before Mark.
  void SetDeadNodes(std::vector<std::string> nodes);
  // The first of `step_nodes` that died; empty when none did.
  std::string DeadNodeOf(const std::vector<std::string>& step_nodes) const;

  // True when a launch (or its setup or finish) that failed with `exit` died
  // of the allocation's end: the end was marked before, or the exit is a
  // signal's (killed by one, or an exit status above 128, as srun and
  // mpirun report a rank killed by one) and the end is marked within `race`.
  // Waits at most `race`, and only for such an exit.
  bool EndedTheStep(const ExitInfo& exit, std::chrono::milliseconds race = kSignalRace) const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable marked_cv_;
  bool marked_ = false;
  std::vector<std::string> dead_nodes_;
};

}  // namespace scimesh::launcher

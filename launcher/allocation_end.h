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

#include "launcher/step_process.h"

namespace scimesh::launcher {

class AllocationEnd {
 public:
  // How long a step's signal death may precede the launcher's own signal:
  // SLURM signals the batch step and the job steps in no set order.
  static constexpr std::chrono::milliseconds kSignalRace{1000};

  // SLURM said the allocation is ending (its SIGTERM reached the launcher,
  // or srun refused a step because the job is completing). One-way.
  void Mark();
  bool marked() const;

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
};

}  // namespace scimesh::launcher

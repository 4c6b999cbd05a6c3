// Pinning: binds this process to the cores the launcher assigned (within what
// the scheduler allows) with hwloc, and exports the per-rank thread and GPU
// environment (OMP_*, CUDA_VISIBLE_DEVICES) its program inherits.
#pragma once

#include <string>

#include "mpi/rank_assignment.h"
#include "protocol/util/status.h"

namespace scimesh::mpi {

struct PinReport {
  std::string bound_to;   // "0-1": the PUs this process is now bound to
  std::string allowed;    // what the scheduler allowed before binding
  bool assignment_honoured = true;  // false: assigned PUs were outside `allowed`
};

// Binds the calling process (all its threads) to assignment.cpus intersected
// with its current allowed cpuset. When the intersection is empty (the
// scheduler already bound this task elsewhere), keeps the scheduler's binding
// and says so in the report. Not thread-safe with other affinity changes.
Result<PinReport> PinProcess(const RankAssignment& assignment);

// Sets OMP_NUM_THREADS, OMP_PLACES ("{0},{1}"), OMP_PROC_BIND=close (unless
// already set by the user) and CUDA_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES /
// ZE_AFFINITY_MASK from the assignment. Call before OpenMP or a GPU runtime
// starts: they read these once.
void ExportRankEnvironment(const RankAssignment& assignment);

}  // namespace scimesh::mpi

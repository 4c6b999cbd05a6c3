// RankWrapper: scimesh-rank's work -- every rank pins itself; rank 0 runs the
// program as a child while it holds the lease, forwarding signals and passing
// on the exit status; the other ranks exec the program so MPI sees it.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "mpi/step_runtime.h"

namespace scimesh::mpi {

struct RankWrapperOptions {
  std::string attempt_dir;         // empty: $SCIMESH_ATTEMPT_DIR
  std::vector<std::string> argv;   // the program and its arguments
  std::chrono::milliseconds kill_grace{10000};  // SIGTERM -> SIGKILL after a lost lease
  bool verbose = false;
};

// Runs the wrapper. Returns only on rank 0 (with the exit status to use, or
// 128 + signal after re-raising failed) or when exec fails on another rank.
// Exceptions: none.
int RunRankWrapper(const RankWrapperOptions& options, const LeaseKeeperFactory& take_over);

}  // namespace scimesh::mpi

// StepRuntime: one rank's view of a running step -- the lease's input, rank
// 0's lease keeper, the cancellation fan-out and the result files. The C API
// in include/scimesh/step.h is a thin layer over this class.
#pragma once

#include <mpi.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "mpi/cancel_fanout.h"
#include "mpi/lease_keeper.h"
#include "mpi/step_files.h"
#include "protocol/util/status.h"
#include "protocol/wire/wire.h"

namespace scimesh::mpi {

using LeaseKeeperFactory = std::function<Result<std::unique_ptr<LeaseKeeper>>(const std::string&)>;

// Not thread-safe: one handle per rank, used by the thread that calls MPI.
class StepRuntime {
 public:
  // Collective over `comm`. `attempt_dir` empty means $SCIMESH_ATTEMPT_DIR.
  // Rank 0 reads the lease and the placement and broadcasts them (one file
  // read per step, not per rank); every rank pins itself; rank 0 takes the
  // lease over with `take_over`. All ranks return the same success or error.
  static Result<std::unique_ptr<StepRuntime>> Begin(MPI_Comm comm, std::string attempt_dir,
                                                    const LeaseKeeperFactory& take_over);

  int rank() const { return rank_; }
  const std::string& input_json() const { return lease_.input_json; }
  const std::string& previous_json() const { return lease_.previous_json; }
  const std::string& pinned_to() const { return pinned_to_; }

  Result<bool> Cancelled();     // local, nonblocking
  Result<bool> CancelledAll();  // collective agreement (one allreduce)

  Status Progress(std::string_view json);
  Status SetOutput(std::string_view json);
  Status SetStatePatch(std::string_view json);
  Status SetUsage(std::string_view json);
  Status AddArtifact(std::string_view name, const std::string& path, std::string_view media_type);

  // Local, any rank: records the step's own failure in failure.json with
  // this rank and host. The first failure any rank records wins; later calls
  // succeed and change nothing. kInvalidArgument for an unknown class or one
  // a step may not report (StepMayReport).
  Status Fail(std::string_view failure_class, std::string_view message);

  // Collective: completes the fan-out, releases the lease on rank 0.
  // Returns whether the lease was lost.
  Result<bool> End();

 private:
  StepRuntime(MPI_Comm comm, StepFiles files) : comm_(comm), files_(std::move(files)) {}

  MPI_Comm comm_;
  StepFiles files_;
  int rank_ = 0;
  Lease lease_;
  std::string pinned_to_;
  std::unique_ptr<LeaseKeeper> keeper_;  // rank 0 only; null when the take-over failed
  std::unique_ptr<CancelFanout> fanout_;
  bool ended_ = false;
};

}  // namespace scimesh::mpi

// CancelFanout: spreads rank 0's "the lease is lost" to every rank of a
// communicator with one nonblocking broadcast (O(log N) messages), driven by
// the ranks' own polls, with no busy waiting and no extra thread.
#pragma once

#include <mpi.h>

#include <memory>

#include "protocol/util/status.h"

namespace scimesh::mpi {

// Protocol: at Open every rank but the root posts MPI_Ibcast on a private
// duplicate of the communicator. The root posts its matching MPI_Ibcast only
// when it announces: value 1 (cancelled) from Poll, or value 0 (finished) from
// Close. Each rank's Poll tests its request, so news travels down the
// broadcast tree as the ranks poll.
// Not thread-safe: call from the thread that makes the rank's MPI calls.
class CancelFanout {
 public:
  // Collective over `comm`.
  static Result<std::unique_ptr<CancelFanout>> Open(MPI_Comm comm);
  ~CancelFanout();
  CancelFanout(const CancelFanout&) = delete;
  CancelFanout& operator=(const CancelFanout&) = delete;

  // Returns true once this rank knows the step is cancelled. On the root,
  // `root_lost` says whether the lease is lost; the first true announces it.
  // Monotonic: once true, always true.
  Result<bool> Poll(bool root_lost);

  // Collective: completes the broadcast (the root announces "finished" if it
  // never announced) and frees the duplicate communicator. Idempotent.
  // Returns whether the step ended cancelled.
  Result<bool> Close();

  bool is_root() const { return rank_ == 0; }

 private:
  CancelFanout() = default;
  Status PostRoot(int value);

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int value_ = 0;             // the broadcast buffer: must outlive the request
  MPI_Request request_ = MPI_REQUEST_NULL;
  bool posted_ = false;       // this rank's Ibcast is posted
  bool completed_ = false;    // this rank's Ibcast completed
  bool cancelled_ = false;
  bool closed_ = false;
};

}  // namespace scimesh::mpi

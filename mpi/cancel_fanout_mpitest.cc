// MPI test of CancelFanout (run under mpirun): a cancellation announced by
// rank 0 reaches every rank through their polls; a step that ends normally
// reports "not cancelled" everywhere. Exit 0 only when every check holds.
#include <mpi.h>

#include <cstdio>
#include <exception>
#include <unistd.h>

#include "mpi/cancel_fanout.h"

using scimesh::mpi::CancelFanout;

namespace {

int Check(bool ok, int rank, const char* what) {
  if (!ok) (void)std::fprintf(stderr, "rank %d: FAILED: %s\n", rank, what);
  return ok ? 0 : 1;
}

// Rank 0 "loses the lease" at poll `announce_at`; every rank polls (as a
// solver would, once per iteration) until it sees the cancellation.
int CancelledMidRun(int rank) {
  auto f = CancelFanout::Open(MPI_COMM_WORLD);
  if (!f.ok()) return Check(false, rank, "Open");
  const long announce_at = 5, max_polls = 200000;
  long polls = 0;
  bool cancelled = false;
  while (!cancelled && polls < max_polls) {
    ++polls;
    auto c = (*f)->Poll(rank == 0 && polls >= announce_at);
    if (!c.ok()) return Check(false, rank, "Poll");
    cancelled = *c;
    if (!cancelled) usleep(100);  // a solver iteration's worth of work
  }
  int failures = Check(cancelled, rank, "cancellation never arrived");
  auto closed = (*f)->Close();
  failures += Check(closed.ok() && *closed, rank, "Close must report cancelled");
  int seen = cancelled ? 1 : 0, all = 0;
  MPI_Allreduce(&seen, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  failures += Check(all == size, rank, "not every rank saw the cancellation");
  std::printf("rank %d: cancelled after %ld polls\n", rank, polls);
  return failures;
}

int FinishedNormally(int rank) {
  auto f = CancelFanout::Open(MPI_COMM_WORLD);
  if (!f.ok()) return Check(false, rank, "Open");
  int failures = 0;
  for (int i = 0; i < 20; ++i) {
    auto c = (*f)->Poll(false);
    failures += Check(c.ok() && !*c, rank, "spurious cancellation");
  }
  auto closed = (*f)->Close();
  failures += Check(closed.ok() && !*closed, rank, "Close must report not cancelled");
  auto again = (*f)->Close();
  failures += Check(again.ok() && !*again, rank, "Close must be idempotent");
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int failures = 0;
  try {
    failures = FinishedNormally(rank) + CancelledMidRun(rank) + FinishedNormally(rank);
  } catch (const std::exception& e) {
    (void)std::fprintf(stderr, "rank %d: FAILED: unexpected error: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("cancel fan-out: %s\n", total == 0 ? "OK" : "FAILED");
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}

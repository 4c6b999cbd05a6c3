// MPI test of pinning (run under mpirun or srun): each rank is assigned one
// allowed PU, pins itself, and reads its affinity back with sched_getaffinity.
// Exit 0 only when every rank's affinity equals its assignment.
#include <mpi.h>
#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "mpi/pinning.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  sched_getaffinity(0, sizeof allowed, &allowed);
  std::vector<unsigned> cpus;
  for (unsigned c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  }
  scimesh::mpi::RankAssignment a;
  a.rank = rank;
  a.cpus = {cpus[static_cast<size_t>(rank) % cpus.size()]};
  a.gpus = {rank % 2};

  int failures = 0;
  auto pinned = scimesh::mpi::PinProcess(a);
  if (!pinned.ok()) {
    (void)std::fprintf(stderr, "rank %d: PinProcess: %s\n", rank, pinned.status().ToString().c_str());
    ++failures;
  }
  cpu_set_t now;
  CPU_ZERO(&now);
  sched_getaffinity(0, sizeof now, &now);
  cpu_set_t want;
  CPU_ZERO(&want);
  CPU_SET(a.cpus[0], &want);
  bool equal = CPU_EQUAL(&now, &want);
  std::printf("rank %d: assigned cpu %u, affinity %s\n", rank, a.cpus[0], equal ? "matches" : "DIFFERS");
  if (!equal) ++failures;

  scimesh::mpi::ExportRankEnvironment(a);
  const char* omp = std::getenv("OMP_NUM_THREADS");
  const char* cuda = std::getenv("CUDA_VISIBLE_DEVICES");
  if (omp == nullptr || std::string(omp) != "1") ++failures;
  if (cuda == nullptr || std::string(cuda) != std::to_string(rank % 2)) ++failures;

  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("pinning: %s\n", total == 0 ? "OK" : "FAILED");
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}

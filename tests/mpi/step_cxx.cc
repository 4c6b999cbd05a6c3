// A small step written in C++ against scimesh/step.hpp (system test program):
// the same computation as step_c.c, through the RAII wrapper.
#include <mpi.h>
#include <scimesh/step.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int rc = 1;
  {
    scimesh::Step step(MPI_COMM_WORLD);
    if (!step.ok()) {
      (void)std::fprintf(stderr, "rank %d: begin: %s\n", rank, scimesh_strerror(step.error()));
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
    std::string input = step.input();
    auto at = input.find("\"terms\":");
    long terms = 1000;
    if (at != std::string::npos) {
      const char* const digits = input.c_str() + at + 8;
      char* end = nullptr;
      errno = 0;
      terms = std::strtol(digits, &end, 10);
      if (end == digits || errno == ERANGE) {
        (void)std::fprintf(stderr, "rank %d: input 'terms' is not a whole number: %s\n", rank, input.c_str());
        MPI_Abort(MPI_COMM_WORLD, 4);
      }
    }
    long local = 0, sum = 0;
    for (long i = rank + 1; i <= terms && !step.cancelled(); i += size) local += i;
    MPI_Reduce(&local, &sum, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    step.progress(R"({"phase":"reduced"})");
    if (rank == 0) {
      std::string out = "{\"sum\":" + std::to_string(sum) + ",\"ranks\":" + std::to_string(size) +
                        ",\"language\":\"c++\"}";
      if (step.set_output(out) != SCIMESH_OK) MPI_Abort(MPI_COMM_WORLD, 5);
    }
    rc = step.end();
  }
  MPI_Finalize();
  return rc == SCIMESH_OK ? 0 : 1;
}

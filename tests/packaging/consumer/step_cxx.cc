// Consumer check in C++: the RAII wrapper scimesh/step.hpp over the installed library.
// Without a lease, the Step must not be ok() and must say SCIMESH_ERR_NO_LEASE.
#include <scimesh/step.hpp>

#include <cstdio>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 0;
  bool ok = true;
  {
    scimesh::Step step(MPI_COMM_WORLD, argc > 1 ? argv[1] : "/nonexistent/attempt");
    rc = step.error();
    ok = step.ok();
  }
  std::printf("cxx: begin -> %d (%s)\n", rc, scimesh_strerror(rc));
  MPI_Finalize();
  return rc == SCIMESH_ERR_NO_LEASE && !ok ? 0 : 1;
}

// A C++ step between two Python steps (tests/python): reads the Python
// step's artifact inputs/make/data.txt and adds relayed.txt made from it.
#include <mpi.h>
#include <scimesh/step.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 1;
  {
    scimesh::Step step(MPI_COMM_WORLD);
    if (!step.ok()) {
      std::fprintf(stderr, "begin: %s\n", scimesh_step_last_error());
    } else {
      std::ifstream in("inputs/make/data.txt");
      std::stringstream text;
      text << in.rdbuf();
      std::ofstream("relayed.txt") << "relayed: " << text.str();
      const bool ok = in.good() || in.eof();
      if (ok && step.add_artifact("relayed.txt", "relayed.txt", "text/plain") == SCIMESH_OK &&
          step.set_output(std::string("{\"read\": ") + std::to_string(text.str().size()) + "}") == SCIMESH_OK) {
        rc = 0;
      } else {
        std::fprintf(stderr, "relay: %s\n", ok ? scimesh_step_last_error() : "inputs/make/data.txt unreadable");
      }
      if (step.end() != SCIMESH_OK) rc = 1;
    }
  }
  MPI_Finalize();
  return rc;
}

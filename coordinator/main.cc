// scimesh-coordinator: main() only guards against stray exceptions and hands
// the arguments to the command line.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "coordinator/cli.h"

int main(int argc, char** argv) {
  try {
    return scimesh::coordinator::RunCoordinatorCli(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scimesh-coordinator: fatal: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "scimesh-coordinator: fatal: unknown exception\n");
  }
  return 1;
}

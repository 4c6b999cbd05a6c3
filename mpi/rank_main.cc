// scimesh-rank: runs an unmodified MPI program as one rank of a scimesh step.
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "mpi/rank_wrapper.h"
#include "protocol/util/version.h"

namespace {

void Usage(FILE* out) {
  std::fputs(
      "Usage: scimesh-rank [--attempt-dir DIR] [--kill-grace SECONDS] [--verbose] -- PROGRAM [ARGS...]\n"
      "\n"
      "Runs an unmodified MPI program as one rank of a scimesh step. Start it\n"
      "under srun or mpirun in place of the program: every rank pins itself to\n"
      "the cores the launcher assigned (placement.json in the attempt\n"
      "directory) and sets OMP_NUM_THREADS/OMP_PLACES/OMP_PROC_BIND and\n"
      "CUDA_VISIBLE_DEVICES. Rank 0 runs PROGRAM as its child and heartbeats the\n"
      "step's lease while it runs, forwarding signals and ending with the\n"
      "program's exit status or signal; if the lease is lost it stops the\n"
      "program (SIGTERM, then SIGKILL after the grace). The other ranks exec\n"
      "PROGRAM directly, so MPI sees the real process.\n"
      "\n"
      "Options:\n"
      "  --attempt-dir DIR    the step's attempt directory (default: $SCIMESH_ATTEMPT_DIR)\n"
      "  --kill-grace SECONDS between SIGTERM and SIGKILL after a lost lease (default 10;\n"
      "                       decimals allowed, e.g. 0.5)\n"
      "  --verbose            report each rank's binding on stderr\n"
      "  --version            print the version, the commit and the SLURM release it was\n"
      "                       built from, and exit\n"
      "  -h, --help           this help\n"
      "\n"
      "The worker's token comes from $SCIMESH_TOKEN_FILE or $SCIMESH_TOKEN, never argv,\n"
      "and PROGRAM's environment never holds it; the coordinator is $SCIMESH_URL.\n",
      out);
}

// Seconds, decimals allowed, 0 to an hour; whole milliseconds are kept.
bool ParseGrace(const char* text, std::chrono::milliseconds* out) {
  char* end = nullptr;
  errno = 0;
  const double seconds = std::strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !(seconds >= 0 && seconds <= 3600)) return false;
  *out = std::chrono::milliseconds(static_cast<long long>(seconds * 1000 + 0.5));
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    scimesh::mpi::RankWrapperOptions o;
    int i = 1;
    for (; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--") {
        ++i;
        break;
      } else if (a == "-h" || a == "--help") {
        Usage(stdout);
        return 0;
      } else if (a == "--version") {
        std::puts(scimesh::VersionLine("scimesh-rank").c_str());
        return 0;
      } else if (a == "--attempt-dir" && i + 1 < argc) {
        o.attempt_dir = argv[++i];
      } else if (a == "--kill-grace" && i + 1 < argc) {
        if (!ParseGrace(argv[++i], &o.kill_grace)) {
          std::fprintf(stderr, "scimesh-rank: --kill-grace needs seconds from 0 to 3600 (e.g. 10 or 0.5), not '%s'\n",
                       argv[i]);
          return 2;
        }
      } else if (a == "--verbose") {
        o.verbose = true;
      } else {
        std::fprintf(stderr, "scimesh-rank: unknown argument '%s'\n\n", a.c_str());
        Usage(stderr);
        return 2;
      }
    }
    for (; i < argc; ++i) o.argv.emplace_back(argv[i]);
    return scimesh::mpi::RunRankWrapper(o, scimesh::mpi::TakeOverLease);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scimesh-rank: internal error: %s\n", e.what());
  }
  return 70;
}

// scimesh-launch's flags, over defaults from the environment: argv -> CliOptions.
#pragma once

#include <string>

#include "launcher/launcher.h"
#include "protocol/util/status.h"

namespace scimesh::launcher {

// What the command line asks for, before anything is checked on the system.
struct CliOptions {
  LauncherConfig config;  // every flag but --spool and -v; no token, no spool_dir yet
  // --spool as given, else $SCIMESH_SPOOL, else $SLURM_SUBMIT_DIR/scimesh-spool,
  // else ./scimesh-spool.
  std::string spool;
  bool verbose = false;  // -v
  bool help = false;     // -h: print CliUsage(); nothing after it was read
  bool version = false;  // --version: print the version line; nothing after it was read
};

// Reads argv[1..argc). InvalidArgument, with the message to print after
// "scimesh-launch: ", for an unknown option, a missing or invalid value, or
// no --definitions. Reads the environment; never throws but for bad_alloc.
Result<CliOptions> ParseCliOptions(int argc, char** argv);

// What -h prints.
const char* CliUsage();

}  // namespace scimesh::launcher

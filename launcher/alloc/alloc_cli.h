// scimesh-alloc's program: options to a running AllocLoop (lock, batch
// script, status file, signals), --dry-run, and the status subcommand.
#pragma once

namespace scimesh::alloc {

// Exit status: 0 stopped by SIGINT/SIGTERM, --once or --dry-run done (all
// shapes accepted); 1 a failure at start (lock held, no token, sinfo, a
// dry run's refused shape); 2 bad options.
int RunAllocCli(int argc, char** argv);

}  // namespace scimesh::alloc

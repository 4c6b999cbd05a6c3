// `scimesh-coordinator serve`: wires the Ledger, keys, artifact store, audit
// log, sweeper and HTTP server together, runs until SIGTERM/SIGINT, and
// shuts down gracefully. Returns the process exit status.
#pragma once

#include "coordinator/serve_config.h"

namespace scimesh::coordinator {

int RunServe(const ServeConfig& config);

}  // namespace scimesh::coordinator

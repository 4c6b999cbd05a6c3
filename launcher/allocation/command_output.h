// Runs a short command (squeue, scontrol) and returns what it printed.
//
// Thread-safe (each call owns its child and pipes). Never uses a shell.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "protocol/util/status.h"

namespace scimesh::launcher {

// Runs argv[0] (searched in PATH) with stdin from /dev/null and returns its
// standard output when it exits 0 within `timeout`. Fails with Unavailable
// when it cannot start or exits non-zero (the message holds the first line
// of its standard error), and with Timeout after killing it when it runs too
// long. Output beyond `max_bytes` fails with InvalidArgument.
Result<std::string> CommandOutput(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                                  size_t max_bytes = 1 << 20);

}  // namespace scimesh::launcher

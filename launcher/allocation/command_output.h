// Runs a short command (squeue, scontrol) and returns what it printed.
//
// Thread-safe (each call owns its child and pipes). Never uses a shell.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "protocol/util/child_process.h"
#include "protocol/util/status.h"

namespace scimesh::launcher {

// What a command that ran to its end printed, and how it ended.
struct CommandRun {
  ChildExit exit;
  std::string out;  // its standard output (at most max_bytes)
  std::string err;  // its standard error, the first 64 KiB
};

// Runs argv[0] (searched in PATH) with stdin from /dev/null and without the
// token variables, whatever its exit status. Fails with Unavailable when it cannot start, with Timeout
// after killing it (and what it started) when it runs past `timeout`, and
// with InvalidArgument when its output passes `max_bytes`.
Result<CommandRun> RunCommand(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                              size_t max_bytes = 1 << 20);

// RunCommand's standard output when the command exits 0. Fails with Unavailable
// when it cannot start or exits non-zero (the message holds the first line
// of its standard error), and with Timeout after killing it when it runs too
// long. Output beyond `max_bytes` fails with InvalidArgument.
Result<std::string> CommandOutput(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                                  size_t max_bytes = 1 << 20);

}  // namespace scimesh::launcher

// The failure of a launched step as the user reads it: the cause first (the
// first failing rank's own exit or signal, as srun or mpirun wrote it in
// step.err), then how the launch as a whole ended; a program that could not
// be started (not found, cannot execute: exit status 127/126, an execve
// error) is a `fatal` failure, since a retry cannot help.
//
// Thread-safe functions of their inputs (one file-system lookup: the step's
// own program, see FindExecFailure). Messages name programs by their base
// name and nodes by name: no local paths.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "launcher/definitions/step_commands.h"
#include "launcher/step/step_process.h"
#include "protocol/runtime/step_context.h"

namespace scimesh::launcher {

// One rank's end as srun or mpirun reported it.
struct RankFailure {
  std::string ranks;             // "task 3 on n2", "tasks 0-1 on n1", "rank 1 on vm", "rank 3"
  std::string what;              // "exit code 7", "Segmentation fault", "signal 11 (Segmentation fault)"
  std::optional<int> exit_code;  // set when the rank exited (rather than died of a signal)
  std::optional<int> signal;     // set when mpirun named the signal's number
  std::string Describe() const { return ranks + ": " + what; }
};

// The first rank that failed on its own in `step_err`; ranks srun reports
// as Terminated or Killed (stopped because of another) come only when no
// other rank is named.
std::optional<RankFailure> FirstRankFailure(std::string_view step_err);

// A program that could not be started.
struct ExecFailure {
  bool not_found = false;  // else: found but cannot execute
  std::string program;     // base name
};

// A program that could not be started: srun's execve error or mpirun's
// "unable to find"/"unable to launch" in `step_err`; or an exit code of 127
// (not found) or 126 (cannot execute) of the first failing rank or of the
// launch, the program named by scimesh-rank's "cannot run" or a shell's "not
// found" line when there is one (without 126/127 such a line is a command
// the step survived, not its cause). `program_path` is the step's program as the definitions file
// gives it: named when the text does not name one, and looked up (an
// absolute path only) when mpirun says "could not access or execute".
std::optional<ExecFailure> FindExecFailure(std::string_view step_err, std::optional<int> exit_code,
                                           const std::string& program_path);

struct FailedLaunch {
  ExitInfo exit;                   // how the launched process (srun, mpirun, the program) ended
  std::string step_err;            // the tail of step.err
  const StepCommand* command = nullptr;
  std::string launched_by;         // base name of what was launched: "srun", "mpirun", the program
};

// The result to report for a launch that ended non-zero or by a signal:
// `fatal` when a program could not be started, `retryable` otherwise.
StepResult DescribeFailedLaunch(const FailedLaunch& in);

// The step's program could not be started by the launcher itself (a
// single-rank step forked on `host`): `spawn_error` is the spawn's
// ("cannot start 'solvr': No such file or directory"). Not found or not
// executable: `fatal`, worded like a rank's exec failure, naming rank 0 and
// the host; no resources (EAGAIN, ENOMEM): `retryable`; else `fatal`.
StepResult DescribeNotStarted(const Status& spawn_error, const std::string& host);

}  // namespace scimesh::launcher

// Reading step.err for the cause of a failed launch, and the message built from it.
#include "launcher/step/step_failure.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <regex>
#include <sstream>

namespace scimesh::launcher {
namespace {

constexpr char kSeeStepErr[] = " (see step.err in its attempt directory)";

// A program's base name, printable and short: step.err is the step's own
// text and the message goes to the coordinator.
std::string ProgramName(std::string_view path) {
  const size_t slash = path.find_last_of('/');
  if (slash != std::string_view::npos) path.remove_prefix(slash + 1);
  std::string out;
  for (char c : path.substr(0, 80)) out += (c >= 0x21 && c < 0x7f) ? c : '?';
  return out.empty() ? "?" : out;
}

// The program the step's command names (a shell command: its first word).
std::string CommandProgram(const StepCommand* cmd) {
  if (cmd == nullptr || cmd->argv.empty()) return "?";
  const std::string& first = cmd->argv.front();
  if (!cmd->shell) return first.empty() ? "?" : first;
  const size_t start = first.find_first_not_of(" \t");
  if (start == std::string::npos) return "?";
  return first.substr(start, first.find_first_of(" \t;|&", start) - start);
}

std::string SignalName(int sig) {
  const char* name = strsignal(sig);
  return std::to_string(sig) + " (" + (name != nullptr ? name : "unknown") + ")";
}

// srun, mpirun and shells exit 128 + N when a process they ran died of
// signal N: name the signal, which is what the user needs to know.
std::string DescribeLaunchExit(const ExitInfo& e) {
  std::string text = e.Describe();
  if (!e.signaled && e.code > 128 && e.code <= 128 + 64) {
    text += " (a rank was killed by signal " + SignalName(e.code - 128) + ")";
  }
  return text;
}

bool StoppedByAnother(const std::string& what) {
  return what.rfind("Terminated", 0) == 0 || what.rfind("Killed", 0) == 0;
}

}  // namespace

std::optional<RankFailure> FirstRankFailure(std::string_view step_err) {
  static const std::regex srun(R"(srun: error: ([A-Za-z0-9._-]+): (tasks?) ([0-9,-]+): ([A-Za-z ()0-9]+))");
  static const std::regex srun_exit(R"(Exited with exit code ([0-9]+))");
  static const std::regex mpirun_signal(
      R"(process rank ([0-9]+) with PID [0-9]+ on node ([A-Za-z0-9._-]+) exited on signal ([0-9]+) \(([A-Za-z ]+)\))");
  static const std::regex mpirun_name(R"(Process name: \[\[[0-9]+,[0-9]+\],([0-9]+)\])");
  static const std::regex mpirun_exit(R"(^\s*Exit code:\s+([0-9]+))");
  std::istringstream lines{std::string(step_err)};
  std::string line, mpirun_rank;
  std::smatch m;
  std::optional<RankFailure> stopped;  // the first rank stopped by another, as a last resort
  while (std::getline(lines, line)) {
    if (std::regex_search(line, m, srun)) {
      RankFailure f{m[2].str() + " " + m[3].str() + " on " + m[1].str(), m[4].str(), std::nullopt, std::nullopt};
      std::smatch code;
      const std::string what = m[4].str();
      if (std::regex_search(what, code, srun_exit)) {
        f.exit_code = std::stoi(code[1].str());
        f.what = "exit code " + code[1].str();
      }
      if (!StoppedByAnother(f.what)) return f;
      if (!stopped) stopped = f;
    } else if (std::regex_search(line, m, mpirun_signal)) {
      return RankFailure{"rank " + m[1].str() + " on " + m[2].str(), "signal " + m[3].str() + " (" + m[4].str() + ")",
                         std::nullopt, std::stoi(m[3].str())};
    } else if (std::regex_search(line, m, mpirun_name)) {
      mpirun_rank = m[1].str();
    } else if (!mpirun_rank.empty() && std::regex_search(line, m, mpirun_exit)) {
      return RankFailure{"rank " + mpirun_rank, "exit code " + m[1].str(), std::stoi(m[1].str()), std::nullopt};
    }
  }
  return stopped;
}

std::optional<ExecFailure> FindExecFailure(std::string_view step_err, std::optional<int> exit_code,
                                           const std::string& program_path) {
  // srun's slurmstepd and mpirun say so only when they could not start a program.
  static const std::regex execve(R"(execve\(\): ([^:\n]+): (No such file or directory|[A-Za-z ]+))");
  static const std::regex mpirun_exe(R"(Executable:\s+(\S+))");
  // scimesh-rank and a shell name the program too, but a step's own stderr
  // may hold such a line from a command it survived: only with 126/127.
  static const std::regex named(
      R"((?:scimesh-rank\[[0-9]+\]: cannot run '|sh: (?:line )?[0-9]+: )([^:'\n]+)'?: ((?:command )?not found|No such file or directory|Permission denied|Exec format error))");
  const std::string err(step_err);
  std::smatch m;
  if (std::regex_search(err, m, execve)) {
    return ExecFailure{m[2].str() == "No such file or directory", ProgramName(m[1].str())};
  }
  const bool mpirun_missing = err.find("mpirun was unable to find the specified executable") != std::string::npos;
  const bool mpirun_either = err.find("could not access") != std::string::npos &&
                             err.find("mpirun was unable to launch") != std::string::npos;
  if (mpirun_missing || mpirun_either) {
    // "could not access or execute" says neither: the path the launcher
    // gave mpirun (its own definitions, not step.err) tells which.
    const bool missing = mpirun_missing || (!program_path.empty() && program_path.front() == '/' &&
                                            ::access(program_path.c_str(), F_OK) != 0);
    const std::string name = std::regex_search(err, m, mpirun_exe) ? ProgramName(m[1].str()) : ProgramName(program_path);
    return ExecFailure{missing, name};
  }
  if (exit_code != 127 && exit_code != 126) return std::nullopt;
  if (std::regex_search(err, m, named)) {
    const std::string why = m[2].str();
    return ExecFailure{why.find("not found") != std::string::npos || why == "No such file or directory",
                       ProgramName(m[1].str())};
  }
  return ExecFailure{exit_code == 127, ProgramName(program_path)};
}

StepResult DescribeNotStarted(const Status& spawn_error, const std::string& host) {
  static const std::regex start(R"(^cannot start '([^']*)': (.*)$)");
  const std::string message = spawn_error.message();
  std::smatch m;
  if (spawn_error.code() == Code::kUnavailable) {
    return StepResult::Retryable("the step could not be started: " + message);
  }
  if (!std::regex_match(message, m, start)) return StepResult::Fatal(message);
  // The agent's report arrives as text: the reason itself tells which.
  const bool not_found = m[2].str() == std::strerror(ENOENT);
  return StepResult::Fatal("the step failed: '" + m[1].str() + "' " + (not_found ? "not found" : "cannot execute") +
                           " (rank 0 on " + host + ": " + m[2].str() +
                           "); a retry cannot help: check the step's command and its PATH on the nodes");
}

StepResult DescribeFailedLaunch(const FailedLaunch& in) {
  const auto rank = FirstRankFailure(in.step_err);
  std::optional<int> code = rank ? rank->exit_code : std::nullopt;
  if (!rank && !in.exit.signaled) code = in.exit.code;
  if (auto exec = FindExecFailure(in.step_err, code, CommandProgram(in.command))) {
    // No 128 + N reading here: mpirun exits 132 or 134 when it could not start a rank.
    const std::string how = rank ? rank->Describe() : in.exit.Describe();
    return StepResult::Fatal("the step failed: '" + exec->program + "' " +
                             (exec->not_found ? "not found" : "cannot execute") + " (" + how +
                             "); a retry cannot help: check the step's command and its PATH on the nodes" +
                             kSeeStepErr);
  }
  if (!rank) return StepResult::Retryable("the step failed: " + DescribeLaunchExit(in.exit) + kSeeStepErr);
  std::string why = "the step failed: " + rank->Describe();
  // The launch's own end adds nothing when it only repeats the rank's code
  // or signal (mpirun exits 128 + N for a rank killed by signal N).
  const bool same = !in.exit.signaled && (rank->exit_code == in.exit.code ||
                                          (rank->signal && 128 + *rank->signal == in.exit.code));
  if (!same) why += "; then " + in.launched_by + " ended with " + DescribeLaunchExit(in.exit);
  return StepResult::Retryable(why + kSeeStepErr);
}

}  // namespace scimesh::launcher

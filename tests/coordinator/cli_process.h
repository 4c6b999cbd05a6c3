// CliProcess: `scimesh-coordinator` started in the background with its
// stdout and stderr on one pipe, read as it writes, for commands that run
// until something happens (`run watch`). Stopped (SIGTERM, then SIGKILL) and
// reaped when it goes away. Not thread-safe.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace scimesh::coordinator::testing {

class CliProcess {
 public:
  // Starts the binary with `args` and `env` added to this process's environment.
  CliProcess(const std::vector<std::string>& args, const std::map<std::string, std::string>& env);
  ~CliProcess();
  CliProcess(const CliProcess&) = delete;
  CliProcess& operator=(const CliProcess&) = delete;

  // Reads what the process writes until `text` is in it, the process closes
  // its output, or `timeout_ms` passes. Whether `text` was seen.
  bool AwaitOutput(const std::string& text, int timeout_ms);
  // Whether the process has not exited (it is not reaped by this call).
  bool Running() const;
  // Reads to the end of its output and waits for it; the exit status.
  int Wait();
  const std::string& output() const { return output_; }

 private:
  // Reads what is there within `timeout_ms`; false at the end of the output.
  bool ReadSome(int timeout_ms);

  pid_t pid_ = -1;
  int fd_ = -1;
  std::string output_;
};

}  // namespace scimesh::coordinator::testing

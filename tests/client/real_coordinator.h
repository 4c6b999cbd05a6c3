// RealCoordinator: runs the scimesh-coordinator binary for a test, on
// 127.0.0.1:0 with a fresh database, keys file and worker+execute token, and
// stops it (SIGTERM, then SIGKILL) when destroyed. Test-only code.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "protocol/util/status.h"

namespace scimesh::testing {

// A child process with its output in `log_path`.
class ChildProcess {
 public:
  static Result<std::unique_ptr<ChildProcess>> Spawn(const std::vector<std::string>& argv,
                                                     const std::map<std::string, std::string>& env,
                                                     const std::string& log_path);
  ~ChildProcess();  // Terminate()
  // Exit status, or nullopt if still running after `timeout_ms`.
  std::optional<int> Wait(int timeout_ms);
  void Terminate();
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

class RealCoordinator {
 public:
  // Fails when the binary cannot be started or never writes its port file.
  // With --tls-cert among the flags, url() is https.
  static Result<std::unique_ptr<RealCoordinator>> Start(const std::vector<std::string>& extra_flags);
  ~RealCoordinator();

  const std::string& url() const { return url_; }
  const std::string& token() const { return token_; }
  const std::string& token_file() const { return token_file_; }
  const std::string& dir() const { return dir_; }
  std::string Log() const;  // the coordinator's output, for failure messages

 private:
  std::string dir_, url_, token_, token_file_;
  std::unique_ptr<ChildProcess> process_;
};

}  // namespace scimesh::testing

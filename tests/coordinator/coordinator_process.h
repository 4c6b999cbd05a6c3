// CoordinatorProcess: the real scimesh-coordinator binary, started on
// 127.0.0.1 with an ephemeral port in a private temporary directory, with
// keys for the tests (w1, w3: worker; w2: worker that may register any
// workflow; exec, exec2: execute; root: admin; reader: read).
// For integration tests and the benchmark. Not thread-safe.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace scimesh::coordinator::testing {

class CoordinatorProcess {
 public:
  struct Options {
    int lease_ttl_ms = 600;
    int heartbeat_ms = 200;
    int grace_ms = 300;
    int retry_base_ms = 50;
    int retry_cap_ms = 1000;
    std::vector<std::string> extra_args;
    std::string binary;  // empty: the scimesh-coordinator of this build (benchmarks compare others)
  };

  explicit CoordinatorProcess(Options options);
  CoordinatorProcess() : CoordinatorProcess(Options{}) {}
  // Stops the process (SIGTERM, then SIGKILL) and removes the directory.
  ~CoordinatorProcess();
  CoordinatorProcess(const CoordinatorProcess&) = delete;
  CoordinatorProcess& operator=(const CoordinatorProcess&) = delete;

  // Starts the binary on the same database and waits for its port file.
  // Empty string on success, else why not (with the log's tail).
  std::string Start();
  // kill -9 and reap.
  void Kill9();
  // SIGTERM and wait; the exit status (or -1).
  int Terminate();
  bool running() const { return pid_ > 0; }

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  const std::string& dir() const { return dir_; }
  std::string db() const { return dir_ + "/coordinator.db"; }
  std::string keys_file() const { return dir_ + "/keys"; }
  std::string log() const;  // everything the process wrote to stderr
  // The secret of a test key: w1, w2, w3, exec, exec2, root, reader.
  const std::string& token(const std::string& name) const { return tokens_.at(name); }
  std::string token_file(const std::string& name) const { return dir_ + "/" + name + ".token"; }
  // Runs the binary with `args` (e.g. "run", "show", ...) and `env` added,
  // capturing stdout; returns the exit status.
  int RunCli(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
             std::string* out) const;

 private:
  Options options_;
  std::string dir_;
  std::map<std::string, std::string> tokens_;
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace scimesh::coordinator::testing

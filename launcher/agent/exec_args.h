// ExecArgs: a child's argv and environment as execve wants them, built
// before fork (after it, only async-signal-safe calls). Shared by the
// launcher's StepProcess and the node agent's step spawn.
//
// A value: the char* arrays point into its own strings; not copyable
// (they would point into the copy's source), movable.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace scimesh::agent {

class ExecArgs {
 public:
  // This process's environment without what `drop` names and what `env`
  // sets, then `env`.
  ExecArgs(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
           const std::function<bool(std::string_view name)>& drop = {});
  ExecArgs(const ExecArgs&) = delete;
  ExecArgs& operator=(const ExecArgs&) = delete;

  char** argv() { return argv_.data(); }
  char** envp() { return envp_.data(); }

 private:
  std::vector<std::string> args_, env_;
  std::vector<char*> argv_, envp_;
};

}  // namespace scimesh::agent

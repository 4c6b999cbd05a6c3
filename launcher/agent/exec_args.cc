// A child's argv and environment, built before fork.
#include "launcher/agent/exec_args.h"

#include <unistd.h>

namespace scimesh::agent {

ExecArgs::ExecArgs(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                   const std::function<bool(std::string_view name)>& drop)
    : args_(argv) {
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv = *e;
    const std::string name = kv.substr(0, kv.find('='));
    if (env.count(name) == 0 && !(drop && drop(name))) env_.push_back(std::move(kv));
  }
  for (const auto& [k, v] : env) env_.push_back(k + "=" + v);
  for (auto& s : env_) envp_.push_back(s.data());
  envp_.push_back(nullptr);
  for (auto& a : args_) argv_.push_back(a.data());
  argv_.push_back(nullptr);
}

}  // namespace scimesh::agent

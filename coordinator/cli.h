// The scimesh-coordinator command line: `serve`, `keys add`, `run ...`.
// Dispatches to the command and returns the process exit status.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace scimesh::coordinator {

int RunCoordinatorCli(const std::vector<std::string>& args);

// One flag of a subcommand's arguments, as every subcommand spells them:
// "--name=value", or "--name" and the argument after it.
struct FlagArg {
  std::string name;
  std::optional<std::string> value;  // nullopt: "--name" came last, without one
};
// The flag `args[i]` (which starts with "--"); when its value is the next
// argument, `i` moves past it.
FlagArg TakeFlag(const std::vector<std::string>& args, size_t& i);

}  // namespace scimesh::coordinator

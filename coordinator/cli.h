// The scimesh-coordinator command line: `serve`, `keys add`, `run ...`.
// Dispatches to the command and returns the process exit status.
#pragma once

#include <string>
#include <vector>

namespace scimesh::coordinator {

int RunCoordinatorCli(const std::vector<std::string>& args);

}  // namespace scimesh::coordinator

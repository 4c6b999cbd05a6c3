// Flags of scimesh-agent, then the agent's loop.
#pragma once

namespace scimesh::agent {

// scimesh-agent's main(): parses flags, starts the keeper, runs the loop.
// Returns the process exit status (2 for a usage error).
int RunAgentCli(int argc, char** argv);

}  // namespace scimesh::agent

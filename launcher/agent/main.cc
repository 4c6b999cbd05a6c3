// scimesh-agent: the node agent that runs a launcher's 1-node steps (docs/agent.md).
#include "launcher/agent/agent_cli.h"

int main(int argc, char** argv) { return scimesh::agent::RunAgentCli(argc, argv); }

// The scimesh-launch command line: flags -> LauncherConfig, and the
// `report` subcommand. main() only calls RunCli.
#pragma once

namespace scimesh::launcher {

// Parses argv, runs the launcher or the report, returns the exit code.
// Never throws.
int RunCli(int argc, char** argv);

}  // namespace scimesh::launcher

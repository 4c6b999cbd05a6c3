// The two ways the poisson program runs: as a scimesh step (the launcher
// started it with SCIMESH_ATTEMPT_DIR set) or standalone under plain mpirun.
#pragma once

#include <string_view>

namespace scimesh::poisson {

// Collective over MPI_COMM_WORLD (MPI initialised by the caller). Reads the
// input from the lease, solves, reports progress, sets the output and adds
// the solution artifact; stops at once, with no output, when the lease is
// lost. Returns the process exit code: 0 on a solve or a clean cancellation,
// 2 for a bad input, 3 when the step cannot begin or end.
int RunAsStep();

// Collective over MPI_COMM_WORLD: solves for `input_json` without the scimesh
// runtime; rank 0 prints the output JSON on stdout. Exit code 0, or 2 for a
// bad input or a failed write (the reason on stderr).
int RunStandalone(std::string_view input_json);

}  // namespace scimesh::poisson

// The two ways the convergence_report program runs: as a one-rank scimesh step
// reading the solves' outputs from its lease, or standalone on a JSON text.
#pragma once

#include <string>
#include <string_view>

#include "protocol/util/status.h"

namespace scimesh::poisson {

// The name of the table file, written in the current working directory.
inline constexpr const char* kConvergenceTableFile = "convergence.txt";

// Builds the study from `previous_json` (see ConvergenceRows), writes the
// table to kConvergenceTableFile and returns the output JSON. Not thread-safe
// (writes a fixed file name in the working directory).
Result<std::string> WriteConvergenceReport(std::string_view previous_json);

// As a step (MPI initialised by the caller; one rank is enough): reads
// `previous` through libscimesh_mpi, writes the table, adds it as an artifact
// and sets the output. Exit code 0, 2 for unusable previous outputs, 3 when
// the step cannot begin or end.
int RunReportAsStep();

// Standalone: writes the table and prints the output JSON on stdout. Exit 0,
// or 2 with the reason on stderr.
int RunReportStandalone(std::string_view previous_json);

}  // namespace scimesh::poisson

// The convergence study of a mesh-refinement run: the solves' outputs in, the
// observed order of accuracy between consecutive resolutions out.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/util/status.h"

namespace scimesh::poisson {

struct ConvergenceRow {
  std::string step_id;
  int n = 0;
  double h = 0;
  int iterations = 0;
  double l2_error = 0;
  // log(e_coarse / e_fine) / log(h_coarse / h_fine) against the next coarser
  // row; none for the coarsest.
  std::optional<double> observed_order;
};

// p = log(e_coarse / e_fine) / log(h_coarse / h_fine). Pure; the caller keeps
// errors > 0 and h_coarse != h_fine.
double ObservedOrder(double e_coarse, double e_fine, double h_coarse, double h_fine);

// Rows from `previous` (the outputs of the steps this one needs, a JSON object
// keyed by step id), coarsest first, with their observed orders. Entries that
// are not solve outputs (no numeric "n" and "l2_error") are skipped; "h" is
// taken from the output, else 1/(n+1). Fails with InvalidArgument when fewer
// than two solves remain, two share a mesh size, an error is not positive, or
// a solve did not converge ("converged": false). Pure; thread-safe.
Result<std::vector<ConvergenceRow>> ConvergenceRows(std::string_view previous_json);

// The plain-text table: a header line, then one line per row with columns
// n, h, iterations, L2 error, observed order ("-" for the coarsest). Pure.
std::string ConvergenceTable(const std::vector<ConvergenceRow>& rows);

// The report step's output: {"table": [{"step", "n", "h", "iterations",
// "l2_error", "observed_order"}...], "observed_order": <finest pair's>}.
// The finest pair is the one closest to the asymptotic regime. Pure.
std::string ConvergenceJson(const std::vector<ConvergenceRow>& rows);

}  // namespace scimesh::poisson

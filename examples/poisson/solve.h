// One Poisson solve: decompose, build the right-hand side, run CG, measure the
// error against the manufactured solution, write the solution file; and the
// step output JSON that reports it.
#pragma once

#include <mpi.h>

#include <array>
#include <string>
#include <vector>

#include "examples/poisson/conjugate_gradient.h"
#include "examples/poisson/solve_input.h"
#include "protocol/util/status.h"

namespace scimesh::poisson {

// Above this n the ASCII solution file would pass ~1 GiB: it is not written.
inline constexpr int kMaxSolutionFileN = 256;

struct SolveReport {
  SolveInput input;
  int ranks = 1;
  std::array<int, 3> dims{};  // the process grid
  CgOutcome cg;
  double l2_error = 0;        // discrete L2, h^{3/2}-weighted
  double max_error = 0;
  double wall_time_s = 0;     // decomposition + CG + error, without the file
  std::string solution_file;  // name in the working directory; "" if none
  std::vector<std::string> hosts;  // the ranks' processor names, distinct, sorted
};

// Collective over `comm`: solves the model problem for `input`. When
// input.write_solution, n <= kMaxSolutionFileN and CG was not cancelled,
// writes "solution-<n>.vti" in the current working directory (from rank 0).
// Every rank returns the same outcome: a report (also when CG stopped on a
// cancellation or max_iterations: see report.cg), or the Status of a bad
// input (n too small for the process grid) or of a failed write.
Result<SolveReport> RunSolve(MPI_Comm comm, const SolveInput& input, const CgHooks& hooks);

// The step output: {"n", "h", "iterations", "relative_residual", "tol",
// "converged", "l2_error", "max_error", "wall_time_s", "ranks", "dims",
// "hosts", "initial_guess", "solution"}. Pure.
std::string ReportJson(const SolveReport& report);

// A progress object: {"iteration": k, "residual": r}. Pure.
std::string ProgressJson(int iteration, double relative_residual);

}  // namespace scimesh::poisson

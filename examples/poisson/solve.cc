// RunSolve: the model problem end to end on one communicator.
#include "examples/poisson/solve.h"

#include <algorithm>
#include <cstring>

#include "examples/poisson/model_problem.h"
#include "examples/poisson/subdomain.h"
#include "examples/poisson/vti_writer.h"
#include "protocol/util/json_io.h"

namespace scimesh::poisson {
namespace {

// Collective: where the ranks run (MPI_Get_processor_name), distinct and
// sorted, on every rank. Tells a user that a multi-node step really spanned
// its nodes.
std::vector<std::string> RankHosts(MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  std::vector<char> all(static_cast<size_t>(size) * MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, comm);
  std::vector<std::string> hosts;
  for (int r = 0; r < size; ++r) {
    const char* p = all.data() + static_cast<size_t>(r) * MPI_MAX_PROCESSOR_NAME;
    hosts.emplace_back(p, strnlen(p, MPI_MAX_PROCESSOR_NAME));
  }
  std::sort(hosts.begin(), hosts.end());
  hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
  return hosts;
}

}  // namespace

Result<SolveReport> RunSolve(MPI_Comm comm, const SolveInput& input, const CgHooks& hooks) {
  MPI_Barrier(comm);  // time the solve, not the ranks' arrival
  const double start = MPI_Wtime();
  SCIMESH_ASSIGN_OR_RETURN(auto sub, Subdomain::Create(comm, input.n));
  SolveReport report;
  report.input = input;
  report.ranks = sub->ranks();
  report.dims = sub->dims();
  report.hosts = RankHosts(comm);

  const std::vector<double> b = RightHandSide(*sub);
  std::vector<double> x = input.initial_guess == InitialGuess::kRough ? RoughField(*sub) : sub->NewField();
  SCIMESH_ASSIGN_OR_RETURN(report.cg, SolveCg(*sub, b, x, input.tol, input.max_iterations, hooks));
  if (report.cg.cancelled) return report;  // the lease is gone: nothing more is worth computing

  const ErrorNorms err = SolutionError(*sub, x);
  report.l2_error = err.l2;
  report.max_error = err.max;
  double elapsed = MPI_Wtime() - start;
  // Rank 0's clock decides, so every rank reports the same figure.
  MPI_Bcast(&elapsed, 1, MPI_DOUBLE, 0, comm);
  report.wall_time_s = elapsed;

  if (input.write_solution && input.n <= kMaxSolutionFileN) {
    const std::string name = "solution-" + std::to_string(input.n) + ".vti";
    SCIMESH_RETURN_IF_ERROR(WriteSolutionVti(*sub, x, name));
    report.solution_file = name;
  }
  return report;
}

std::string ReportJson(const SolveReport& r) {
  return ObjectText([&](JsonWriter& w) {
    WriteInt(w, "n", r.input.n);
    WriteDouble(w, "h", 1.0 / (r.input.n + 1));
    WriteInt(w, "iterations", r.cg.iterations);
    WriteDouble(w, "relative_residual", r.cg.relative_residual);
    WriteDouble(w, "tol", r.input.tol);
    WriteBool(w, "converged", r.cg.converged);
    WriteDouble(w, "l2_error", r.l2_error);
    WriteDouble(w, "max_error", r.max_error);
    WriteDouble(w, "wall_time_s", r.wall_time_s);
    WriteInt(w, "ranks", r.ranks);
    WriteArray(w, "dims", r.dims, [](JsonWriter& a, int d) { a.Int(d); });
    WriteArray(w, "hosts", r.hosts, [](JsonWriter& a, const std::string& h) {
      a.String(h.data(), static_cast<rapidjson::SizeType>(h.size()));
    });
    WriteString(w, "initial_guess", InitialGuessName(r.input.initial_guess));
    WriteOptString(w, "solution", r.solution_file.empty() ? std::nullopt : std::optional(r.solution_file));
  });
}

std::string ProgressJson(int iteration, double relative_residual) {
  return ObjectText([&](JsonWriter& w) {
    WriteInt(w, "iteration", iteration);
    WriteDouble(w, "residual", relative_residual);
  });
}

}  // namespace scimesh::poisson

// RunSolve: the model problem end to end on one communicator.
#include "examples/poisson/solve.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cstring>

#include "examples/poisson/model_problem.h"
#include "examples/poisson/subdomain.h"
#include "examples/poisson/vti_writer.h"

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
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("n");
  w.Int(r.input.n);
  w.Key("h");
  w.Double(1.0 / (r.input.n + 1));
  w.Key("iterations");
  w.Int(r.cg.iterations);
  w.Key("relative_residual");
  w.Double(r.cg.relative_residual);
  w.Key("tol");
  w.Double(r.input.tol);
  w.Key("converged");
  w.Bool(r.cg.converged);
  w.Key("l2_error");
  w.Double(r.l2_error);
  w.Key("max_error");
  w.Double(r.max_error);
  w.Key("wall_time_s");
  w.Double(r.wall_time_s);
  w.Key("ranks");
  w.Int(r.ranks);
  w.Key("dims");
  w.StartArray();
  for (int d : r.dims) w.Int(d);
  w.EndArray();
  w.Key("hosts");
  w.StartArray();
  for (const auto& h : r.hosts) w.String(h.c_str());
  w.EndArray();
  w.Key("initial_guess");
  w.String(InitialGuessName(r.input.initial_guess).data());
  w.Key("solution");
  if (r.solution_file.empty()) {
    w.Null();
  } else {
    w.String(r.solution_file.c_str());
  }
  w.EndObject();
  return buf.GetString();
}

std::string ProgressJson(int iteration, double relative_residual) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("iteration");
  w.Int(iteration);
  w.Key("residual");
  w.Double(relative_residual);
  w.EndObject();
  return buf.GetString();
}

}  // namespace scimesh::poisson

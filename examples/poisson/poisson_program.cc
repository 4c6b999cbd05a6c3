// RunAsStep / RunStandalone: a solve wired to libscimesh_mpi, or to stdout.
#include "examples/poisson/poisson_program.h"

#include <mpi.h>
#include <scimesh/step.hpp>

#include <cstdio>
#include <string>

#include "examples/poisson/solve.h"
#include "examples/poisson/step_end.h"
#include "protocol/util/log.h"

namespace scimesh::poisson {

namespace {

int WorldRank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

std::string UsageJson(const SolveReport& r) {
  return "{\"wall_s\":" + std::to_string(r.wall_time_s) +
         ",\"rank_s\":" + std::to_string(r.wall_time_s * r.ranks) + "}";
}

// Rank 0 only: the solve's result into the step (output, usage, artifact).
int Publish(Step& step, const SolveReport& report) {
  auto log = log::For("poisson");
  if (int rc = step.set_output(ReportJson(report)); rc != SCIMESH_OK) {
    log->error("cannot set the step output: {}: {}", scimesh_strerror(rc), scimesh_step_last_error());
    return 3;
  }
  step.set_usage(UsageJson(report));  // informational: a failure here changes nothing
  if (!report.solution_file.empty()) {
    const int rc = step.add_artifact(report.solution_file, report.solution_file, "application/vnd.vtk.imagedata+xml");
    if (rc != SCIMESH_OK) {
      log->error("cannot add the solution artifact: {}: {}", scimesh_strerror(rc), scimesh_step_last_error());
      return 3;
    }
  }
  return 0;
}

}  // namespace

int RunAsStep() {
  auto log = log::For("poisson");
  const int rank = WorldRank();
  Step step(MPI_COMM_WORLD);
  if (!step.ok()) {
    log->error("cannot begin the step: {}: {}", scimesh_strerror(step.error()), scimesh_step_last_error());
    return 3;
  }
  int exit_code = 0;
  auto input = ParseSolveInput(step.input());
  if (!input.ok()) {
    // Every rank read the same input: rank 0 says so once. A retry cannot
    // help, so the attempt fails fatal with the reason, not retryable.
    if (rank == 0) {
      log->error("bad step input: {}", input.status().message());
      step.fail("fatal", "bad step input: " + input.status().message());
    }
    exit_code = 2;
  } else {
    CgHooks hooks;
    hooks.cancelled = [&step] { return step.cancelled(); };
    if (rank == 0)
      hooks.progress = [&step](int k, double r) { step.progress(ProgressJson(k, r)); };
    auto report = RunSolve(MPI_COMM_WORLD, *input, hooks);
    if (!report.ok()) {
      if (rank == 0) log->error("solve failed: {}", report.status().ToString());
      exit_code = 2;
    } else if (report->cg.cancelled) {
      if (rank == 0) log->info("lease lost: stopped at iteration {}, nothing reported", report->cg.iterations);
    } else if (rank == 0) {
      exit_code = Publish(step, *report);
    }
  }
  return EndStepAndAgree(step, exit_code, *log);  // rank 0 alone published
}

int RunStandalone(std::string_view input_json) {
  auto log = log::For("poisson");
  const int rank = WorldRank();
  auto input = ParseSolveInput(input_json);
  if (!input.ok()) {
    if (rank == 0) log->error("bad input: {}", input.status().message());
    return 2;
  }
  auto report = RunSolve(MPI_COMM_WORLD, *input, CgHooks{});
  if (!report.ok()) {
    if (rank == 0) log->error("solve failed: {}", report.status().ToString());
    return 2;
  }
  if (rank == 0) std::printf("%s\n", ReportJson(*report).c_str());
  return 0;
}

}  // namespace scimesh::poisson

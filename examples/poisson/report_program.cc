// convergence_report: the table file, the step wiring and the standalone mode.
#include "examples/poisson/report_program.h"

#include <mpi.h>
#include <scimesh/step.hpp>

#include <cstdio>
#include <fstream>

#include "examples/poisson/convergence.h"
#include "examples/poisson/step_end.h"
#include "protocol/util/log.h"

namespace scimesh::poisson {

Result<std::string> WriteConvergenceReport(std::string_view previous_json) {
  SCIMESH_ASSIGN_OR_RETURN(auto rows, ConvergenceRows(previous_json));
  std::ofstream table(kConvergenceTableFile, std::ios::trunc);
  table << ConvergenceTable(rows);
  table.close();
  if (!table) return Status::Io(std::string("cannot write ") + kConvergenceTableFile);
  return ConvergenceJson(rows);
}

int RunReportAsStep() {
  auto log = log::For("convergence_report");
  Step step(MPI_COMM_WORLD);
  if (!step.ok()) {
    log->error("cannot begin the step: {}: {}", scimesh_strerror(step.error()), scimesh_step_last_error());
    return 3;
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int exit_code = 0;
  if (rank == 0) {  // one rank does the arithmetic, whatever the step was given
    auto output = WriteConvergenceReport(step.previous());
    if (!output.ok()) {
      log->error("no convergence table: {}", output.status().ToString());
      exit_code = 2;
    } else if (int rc = step.add_artifact(kConvergenceTableFile, kConvergenceTableFile, "text/plain");
               rc != SCIMESH_OK) {
      log->error("cannot add the table artifact: {}: {}", scimesh_strerror(rc), scimesh_step_last_error());
      exit_code = 3;
    } else if (int set = step.set_output(*output); set != SCIMESH_OK) {
      log->error("cannot set the step output: {}: {}", scimesh_strerror(set), scimesh_step_last_error());
      exit_code = 3;
    }
  }
  return EndStepAndAgree(step, exit_code, *log);
}

int RunReportStandalone(std::string_view previous_json) {
  auto output = WriteConvergenceReport(previous_json);
  if (!output.ok()) {
    log::For("convergence_report")->error("no convergence table: {}", output.status().ToString());
    return 2;
  }
  std::printf("%s\n", output->c_str());
  return 0;
}

}  // namespace scimesh::poisson

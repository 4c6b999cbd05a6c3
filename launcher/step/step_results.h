// What a launched step left in its attempt directory for the report:
// output.json, state_patch.json, usage.json, the artifacts it declared, and
// failure.json, the failure a rank reported (scimesh_step_fail).
// All of it was written by the step's code, so all of it is read with the
// safe reader (protocol/attempt_files.h): no symlink, no FIFO, no file of
// another user, size-capped, JSON depth-limited.
//
// Free functions; thread-safe.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "protocol/attempt/failure_file.h"
#include "protocol/util/status.h"

namespace scimesh::launcher {

struct StepResults {
  std::optional<std::string> output;       // output.json as written; nullopt when absent
  std::optional<std::string> state_patch;  // state_patch.json; nullopt when absent
  std::map<std::string, double> usage;     // usage.json's numbers
  // name, media type; sorted by name. A directory has kDirectoryArtifactMediaType.
  std::vector<std::pair<std::string, std::string>> artifacts;
};

// Reads the results of the attempt directory `dir_fd`, whose files must
// belong to `owner`. An error names the file and why it was refused.
Result<StepResults> ReadStepResults(int dir_fd, uid_t owner);

// failure.json of the attempt directory `dir_fd`, read with the safe reader
// (owner `owner`, kMaxFailureFileBytes): nullopt when no rank wrote one. An
// error names failure.json and why it was refused: unreadable, malformed, an
// unknown class, or one a step may not report.
Result<std::optional<FailureFile>> ReadStepFailure(int dir_fd, uid_t owner);

// True when srun, as `step_err` reports it, refused to start the step because
// the allocation is ending or gone ("Unable to create step for job 41:
// Job/step already completing or completed", "Slurm job 41 has expired"):
// the allocation's time limit or a cancel hit it before the launcher saw a
// signal. The step never ran; it is not the step's fault.
bool SrunFoundAllocationEnding(const std::string& step_err);

}  // namespace scimesh::launcher

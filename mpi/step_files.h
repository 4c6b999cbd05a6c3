// StepFiles: the files a running step reads and writes in its attempt
// directory (docs/protocol.md, "Local files"): lease.json in; output.json,
// state_patch.json, usage.json and artifacts/ out, for the launcher's report.
#pragma once

#include <string>
#include <string_view>

#include "protocol/attempt_files.h"
#include "protocol/status.h"

namespace scimesh::mpi {

struct LeaseView {
  std::string lease_id;
  int attempt = 0;
  std::string input_json;     // compact JSON text of the lease's "input"
  std::string previous_json;  // compact JSON text of "previous" ({} if absent)
};

// Parses lease.json text (the lease object plus coordinator_url and worker_id).
Result<LeaseView> ParseLeaseView(std::string_view lease_json);

class StepFiles {
 public:
  explicit StepFiles(std::string attempt_dir) : dir_(std::move(attempt_dir)) {}

  const std::string& dir() const { return dir_; }

  Result<LeaseView> ReadLease() const;

  // Each validates that `json` is a JSON object and replaces the file
  // atomically (temporary file, fsync, rename).
  Status WriteOutput(std::string_view json) const { return WriteObject(kOutputFileName, json); }
  Status WriteStatePatch(std::string_view json) const { return WriteObject(kStatePatchFileName, json); }
  Status WriteUsage(std::string_view json) const { return WriteObject(kUsageFileName, json); }

  // Copies `source` to artifacts/<name> (its media type, when given, goes to
  // artifacts/.<name>.media-type). `name` must be a safe artifact name; the copy never follows a
  // symlink planted at the destination.
  Status AddArtifact(std::string_view name, const std::string& source, std::string_view media_type) const;

 private:
  Status WriteObject(const char* file, std::string_view json) const;
  std::string dir_;
};

// 1-128 chars of [A-Za-z0-9._-], not starting with '.'.
bool IsSafeArtifactName(std::string_view name);

// Writes `content` to `path` atomically: a temporary file beside it, fsync, rename.
Status WriteFileAtomically(const std::string& path, std::string_view content, int mode = 0644);

}  // namespace scimesh::mpi

// StepFiles: the files a running step writes in its attempt directory
// (docs/protocol.md, "Local files"): output.json, state_patch.json,
// usage.json, failure.json and artifacts/, for the launcher's report.
// lease.json is read with protocol/lease_file.h.
#pragma once

#include <string>
#include <string_view>

#include "protocol/attempt/attempt_files.h"
#include "protocol/attempt/failure_file.h"
#include "protocol/util/status.h"

namespace scimesh::mpi {

class StepFiles {
 public:
  explicit StepFiles(std::string attempt_dir) : dir_(std::move(attempt_dir)) {}

  const std::string& dir() const { return dir_; }

  // Each validates that `json` is a JSON object and replaces the file
  // atomically and durably (protocol/atomic_file.h).
  Status WriteOutput(std::string_view json) const { return WriteObject(kOutputFileName, json); }
  Status WriteStatePatch(std::string_view json) const { return WriteObject(kStatePatchFileName, json); }
  Status WriteUsage(std::string_view json) const { return WriteObject(kUsageFileName, json); }

  // Creates failure.json (0644, durable) unless it exists: true when this
  // call wrote it, false when another rank (or an earlier call) was first.
  // Written to a temporary file and link()ed into place, so it appears whole
  // and once; kPermissionDenied when something other than a regular file
  // (a planted symlink) holds its name: that is never followed.
  Result<bool> WriteFailure(const FailureFile& failure) const;

  // Copies `source` to artifacts/<name> (its media type, when given, goes to
  // artifacts/.<name>.media-type). `name` must pass the protocol's artifact
  // name rule (protocol/identifiers.h); the copy never follows a symlink
  // planted at the destination.
  Status AddArtifact(std::string_view name, const std::string& source, std::string_view media_type) const;

 private:
  Status WriteObject(const char* file, std::string_view json) const;
  std::string dir_;
};

}  // namespace scimesh::mpi

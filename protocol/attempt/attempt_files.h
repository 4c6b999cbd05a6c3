// The attempt directory's files in one place: their names, their size caps,
// and the one safe way to read anything a step (user code) or another user
// could have touched.
//
// Everything in an attempt directory is untrusted input. A file is opened
// relative to the directory's descriptor with O_NOFOLLOW|O_NONBLOCK|O_CLOEXEC
// (a planted symlink is refused, a FIFO never blocks), then fstat'ed: it must
// be a regular file owned by the expected uid and no larger than its cap. JSON
// is parsed iteratively with a depth limit (protocol/json_io.h). A refusal is
// a Status naming the file (never its full path): never a crash, never a hang.
//
// Free functions; thread-safe.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "protocol/util/status.h"
#include "protocol/util/unique_fd.h"

namespace scimesh {

// The files of <spool>/<run>/<step>/<attempt>/ (docs/protocol.md "Local files").
inline constexpr char kLeaseFileName[] = "lease.json";
inline constexpr char kLeaseStateFileName[] = "lease.state";
inline constexpr char kPlacementFileName[] = "placement.json";
inline constexpr char kOutputFileName[] = "output.json";
inline constexpr char kStatePatchFileName[] = "state_patch.json";
inline constexpr char kUsageFileName[] = "usage.json";
inline constexpr char kFailureFileName[] = "failure.json";  // a step's own failure (scimesh_step_fail)
inline constexpr char kStepOutFileName[] = "step.out";
inline constexpr char kStepErrFileName[] = "step.err";
inline constexpr char kSetupOutFileName[] = "setup.out";    // run.setup's output
inline constexpr char kSetupErrFileName[] = "setup.err";
inline constexpr char kFinishOutFileName[] = "finish.out";  // run.finish's output
inline constexpr char kFinishErrFileName[] = "finish.err";
inline constexpr char kArtifactsDirName[] = "artifacts";

// artifacts/.<name>.media-type: an artifact's media type, beside it. The dot
// keeps it from ever being taken for an artifact (whose names cannot start
// with '.').
inline std::string MediaTypeSidecarName(std::string_view artifact) {
  return "." + std::string(artifact) + ".media-type";
}

// Size caps: larger files are refused, never read into memory.
inline constexpr size_t kMaxLeaseFileBytes = size_t{16} << 20;   // the lease carries input and previous outputs
inline constexpr size_t kMaxStateFileBytes = size_t{64} << 10;
inline constexpr size_t kMaxPlacementFileBytes = size_t{4} << 20;
inline constexpr size_t kMaxResultFileBytes = size_t{16} << 20;  // output.json, state_patch.json, usage.json
inline constexpr size_t kMaxFailureFileBytes = size_t{64} << 10;
inline constexpr size_t kMaxSidecarFileBytes = 4096;             // artifacts/.<name>.media-type
inline constexpr size_t kMaxStepErrTailBytes = size_t{1} << 20;  // step.err, for the first rank failure

// Reads `name` (one file of `dir_fd`; AT_FDCWD with a path for a lone file)
// as described above. kNotFound when it does not exist; kPermissionDenied for
// a symlink or a file of another uid; kInvalidArgument for a FIFO, device or
// directory, or a file over `max_bytes`.
Result<std::string> ReadAttemptFile(int dir_fd, std::string_view name, uid_t owner, size_t max_bytes);

// What a caller adds to the safe reader's checks.
struct ReadRules {
  bool private_only = false;  // refuse group/other permission bits (a secret)
  std::string_view role;      // names the file in messages (default: its last component)
};

// ReadAttemptFile with `rules`; kPermissionDenied for a secret others may read.
Result<std::string> ReadAttemptFile(int dir_fd, std::string_view name, uid_t owner, size_t max_bytes,
                                    const ReadRules& rules);

// The last `max_bytes` of `name`, with the same checks except the size cap
// (for logs such as step.err, which may be large).
Result<std::string> ReadAttemptFileTail(int dir_fd, std::string_view name, uid_t owner, size_t max_bytes);

// ReadAttemptFile, then JSON parsed iteratively (depth limit kMaxJsonDepth).
Result<rapidjson::Document> ReadAttemptJson(int dir_fd, std::string_view name, uid_t owner, size_t max_bytes);

// Opens directory `path` without following a symlink at its last component.
// It must belong to `owner` and not be writable by group or others:
// kPermissionDenied naming `role` and `path` otherwise (the path is the
// user's own configuration, so naming it is what helps).
Result<UniqueFd> OpenPrivateDirectory(const std::string& path, uid_t owner, std::string_view role);

// The same checks on a directory already open.
Status CheckPrivateDirectory(int dir_fd, uid_t owner, std::string_view role);

// Creates `path` (its parents as needed, the last level 0700) unless it exists,
// then OpenPrivateDirectory.
Result<UniqueFd> MakePrivateDirectory(const std::string& path, uid_t owner, std::string_view role);

}  // namespace scimesh

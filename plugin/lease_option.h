// The --scimesh-lease option: which lease a job or step carries, given as the
// attempt directory or as the lease id (then the directory comes from the
// job's SCIMESH_ATTEMPT_DIR, which scimesh-launch sets).
//
// Pure functions; thread-safe. SLURM calls option callbacks more than once
// (and in several processes), so callers store the parsed value, never
// accumulate it.
#pragma once

#include <string>
#include <string_view>

#include "protocol/util/status.h"

namespace scimesh::spank {

inline constexpr char kLeaseOptionName[] = "scimesh-lease";
// Read when the option is absent (sbatch/srun process environment in local
// context, the job's environment in remote context).
inline constexpr char kLeaseEnvFallback[] = "SCIMESH_LEASE";
inline constexpr char kAttemptDirEnv[] = "SCIMESH_ATTEMPT_DIR";

struct LeaseTarget {
  std::string attempt_dir;  // absolute, normalised (no "." or ".." parts); may be empty with lease_id
  std::string lease_id;     // set when the option named a lease id

  bool operator==(const LeaseTarget&) const = default;
};

// An absolute directory path (no "..", no control characters, < 4096 bytes)
// or a lease id (l_ + 16 hex). kInvalidArgument says which rule failed, in
// words a user of srun understands.
Result<LeaseTarget> ParseLeaseOption(std::string_view value);

// Fills attempt_dir of a lease-id target from `attempt_dir_env`
// (SCIMESH_ATTEMPT_DIR); a directory target is returned as it is.
Result<LeaseTarget> ResolveLeaseTarget(LeaseTarget target, std::string_view attempt_dir_env);

}  // namespace scimesh::spank

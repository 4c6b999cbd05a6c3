// The attempt directory as the plugin sees it: opened as the job owner, its
// lease.json parsed (lease id, attempt, TTL, coordinator_url).
//
// Plain value; move-only (owns the directory's descriptor).
#pragma once

#include <string>

#include "plugin/lease_option.h"
#include "plugin/owner_files.h"
#include "protocol/status.h"
#include "protocol/unique_fd.h"
#include "protocol/wire.h"

namespace scimesh::spank {

struct LeaseFiles {
  UniqueFd dir;
  Lease lease;
  std::string coordinator_url;  // empty when lease.json has none
};

// Opens target.attempt_dir and reads lease.json as `owner`; a lease-id target
// must match the lease in the file. Errors name the file's role, not its path.
Result<LeaseFiles> OpenLeaseFiles(const LeaseTarget& target, JobOwner owner);

}  // namespace scimesh::spank

// The attempt directory as the plugin sees it: opened as the job owner, its
// lease.json read as the owner and parsed by protocol/lease_file.h.
//
// Plain value; move-only (owns the directory's descriptor).
#pragma once

#include "plugin/lease_option.h"
#include "plugin/owner_files.h"
#include "protocol/attempt/lease_file.h"
#include "protocol/util/status.h"
#include "protocol/util/unique_fd.h"

namespace scimesh::spank {

struct LeaseFiles {
  UniqueFd dir;
  LeaseFile file;  // file.coordinator_url is informational: never used as a URL
  const Lease& lease() const { return file.lease; }
};

// Opens target.attempt_dir and reads lease.json as `owner`; a lease-id target
// must match the lease in the file. Errors name the file's role, not its path.
Result<LeaseFiles> OpenLeaseFiles(const LeaseTarget& target, JobOwner owner);

}  // namespace scimesh::spank

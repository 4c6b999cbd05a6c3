// lease.json, the lease as the launcher claimed it, in the attempt directory:
// written once by the launcher (0600), read by rank 0 and the SPANK plugin.
//
// Its coordinator_url is informational. The URL a process talks to comes from
// its own configuration (the launcher's --url, rank 0's SCIMESH_URL, the
// plugin's plugstack url=), never from this file: anything in an attempt
// directory may have been written by the step or planted by another user.
// A lease.json naming another origin than the configured one is refused.
//
// Plain values and free functions; thread-safe.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "protocol/util/status.h"
#include "protocol/wire/wire.h"

namespace scimesh {

struct LeaseFile {
  Lease lease;
  std::string coordinator_url;  // as written; empty when absent
};

Result<LeaseFile> ParseLeaseFile(std::string_view json);

// Reads lease.json of `dir_fd` with the safe reader (a file of `owner`).
Result<LeaseFile> ReadLeaseFileAt(int dir_fd, uid_t owner);

// OK when the file names no coordinator or one of the same origin (scheme,
// host, port) as `configured_url`; kPermissionDenied otherwise, saying so
// without repeating the planted URL in full.
Status CheckLeaseFileOrigin(const LeaseFile& file, std::string_view configured_url);

}  // namespace scimesh

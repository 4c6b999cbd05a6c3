// The identifier rules of docs/protocol.md ("Conventions"), checked before a
// name from the wire is used in a URL or becomes part of a local path.
//
// Pure functions; thread-safe. Each returns OK or kInvalidArgument naming
// `field` and the rule that was broken.
#pragma once

#include <string_view>

#include "protocol/util/status.h"

namespace scimesh {

// Step ids, workflow names, versions: 1-64 of [A-Za-z0-9._-]. A step id also
// names a directory, so "." and ".." are refused too.
Status CheckIdentifier(std::string_view value, std::string_view field);

// Artifact names: 1-128 of [A-Za-z0-9._-], not starting with '.'. No '/', so
// no absolute path and no "..": a valid name is always one path component.
Status CheckArtifactName(std::string_view value, std::string_view field);

// worker_id: 1-128 of [A-Za-z0-9._:@/-].
Status CheckWorkerId(std::string_view value, std::string_view field);
// Free text a peer reports about itself (register's `host` and `version`):
// printable ASCII only (0x20-0x7e), so it can never forge a log line or
// drive a terminal reading one.
Status CheckPrintableText(std::string_view value, std::string_view field);

// lease_id "l_" + 16 lowercase hex; run_id "r_" + 16 lowercase hex.
Status CheckLeaseId(std::string_view value, std::string_view field);
Status CheckRunId(std::string_view value, std::string_view field);

// 64 lowercase hex.
Status CheckSha256(std::string_view value, std::string_view field);

}  // namespace scimesh

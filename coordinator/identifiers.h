// Identifier rules of docs/protocol.md "Conventions" as yes/no questions (the
// rules are protocol/identifiers.h's, the client's: they exist once), and the
// random ids the coordinator issues (run, lease, trace, span, key secrets).
// Thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace scimesh::coordinator {

// worker_id: 1-128 characters of [A-Za-z0-9._:@/-].
bool IsWorkerId(std::string_view s);
// Step ids, workflow names and versions: 1-64 characters of [A-Za-z0-9._-],
// not "." or ".." (a step id names a directory on the worker).
bool IsName(std::string_view s);
// Artifact names: 1-128 characters of [A-Za-z0-9._-], not starting with '.'.
bool IsArtifactName(std::string_view s);
// Key names in the keys file: like IsName.
inline bool IsKeyName(std::string_view s) { return IsName(s); }
// 64 lowercase hex digits.
bool IsSha256Hex(std::string_view s);
// "r_" / "l_" followed by 16 lowercase hex digits.
bool IsRunId(std::string_view s);
bool IsLeaseId(std::string_view s);

// Lowercase hex of `bytes` random bytes from OpenSSL's CSPRNG. Aborts the
// process if the CSPRNG fails (ids must never repeat).
std::string RandomHex(size_t bytes);

inline std::string NewRunId() { return "r_" + RandomHex(8); }
inline std::string NewLeaseId() { return "l_" + RandomHex(8); }
inline std::string NewTraceId() { return RandomHex(16); }
inline std::string NewSpanId() { return RandomHex(8); }

}  // namespace scimesh::coordinator

// The random ids the coordinator issues (run, lease, trace, span, key
// secrets). Their rules, like every identifier's, are protocol/identifiers.h's.
// Thread-safe.
#pragma once

#include <string>

namespace scimesh::coordinator {

// Lowercase hex of `bytes` random bytes from OpenSSL's CSPRNG. Aborts the
// process if the CSPRNG fails (ids must never repeat).
std::string RandomHex(size_t bytes);

inline std::string NewRunId() { return "r_" + RandomHex(8); }
inline std::string NewLeaseId() { return "l_" + RandomHex(8); }
inline std::string NewTraceId() { return RandomHex(16); }
inline std::string NewSpanId() { return RandomHex(8); }

}  // namespace scimesh::coordinator

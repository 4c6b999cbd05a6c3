// The random ids the coordinator issues (run, lease, trace, span, key
// secrets). Their rules, like every identifier's, are protocol/identifiers.h's.
// Thread-safe.
#pragma once

#include <string>

#include "protocol/util/random_hex.h"

namespace scimesh::coordinator {

inline std::string NewRunId() { return "r_" + RandomHex(8); }
inline std::string NewLeaseId() { return "l_" + RandomHex(8); }
inline std::string NewTraceId() { return RandomHex(16); }
inline std::string NewSpanId() { return RandomHex(8); }

}  // namespace scimesh::coordinator

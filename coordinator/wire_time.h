// Wall-clock time as the coordinator stores it (milliseconds since the Unix
// epoch) and as the wire shows it (RFC 3339 UTC with milliseconds).
#pragma once

#include <cstdint>
#include <string>

namespace scimesh::coordinator {

// Now, in ms since the epoch (system clock: stored times must survive restarts).
int64_t NowMs();

// "2026-11-29T08:00:30.000Z". Thread-safe.
std::string FormatWireTime(int64_t ms_since_epoch);

}  // namespace scimesh::coordinator

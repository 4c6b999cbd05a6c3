// The protocol's numeric limits (docs/protocol.md "Limits" and each call's
// table): one set, checked by the coordinator's request parsers and by the
// client's (protocol/wire_json.h), so both give a message the same verdict
// (coordinator/verdict_corpus_test.cc).
#pragma once

#include <cstddef>
#include <cstdint>

namespace scimesh {

// Largest integer accepted where docs/protocol.md names no bound.
inline constexpr int64_t kMaxWireInt = 2147483647;
inline constexpr int64_t kMaxClaimMax = 64;          // claim `max`
inline constexpr int64_t kMaxClaimWaitMs = 60000;    // claim `wait_ms`
inline constexpr int64_t kMaxConcurrency = 4096;     // register `concurrency`
inline constexpr int64_t kMaxRunDeadlineS = 31536000;  // run `deadline_s` (a year)
inline constexpr size_t kMaxProgressBytes = 4 * 1024;      // heartbeat `progress`, serialized
inline constexpr size_t kMaxErrorMessageBytes = 4 * 1024;  // fail `message` (longer is cut)

}  // namespace scimesh

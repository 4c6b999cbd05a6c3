// The protocol's numeric limits (docs/protocol.md "Limits" and each call's
// table): one set, checked by the coordinator's request parsers and by the
// client's (protocol/wire_json.h), so both give a message the same verdict
// (coordinator/verdict_corpus_test.cc).
#pragma once

#include <cstddef>
#include <cstdint>

#include "protocol/util/json_io.h"

namespace scimesh {

// Largest integer accepted where docs/protocol.md names no bound.
inline constexpr int64_t kMaxWireInt = 2147483647;
inline constexpr int64_t kMaxClaimMax = 64;          // claim `max`
inline constexpr int64_t kMaxClaimWaitMs = 60000;    // claim `wait_ms`
inline constexpr int64_t kMaxConcurrency = 4096;     // register `concurrency`
inline constexpr int64_t kMaxRunDeadlineS = 31536000;  // run `deadline_s` (a year)
inline constexpr int64_t kMaxRunList = 200;          // `limit` of GET /v1/api/runs
inline constexpr int64_t kDefaultRunList = 20;       // its default
inline constexpr size_t kMaxDemandWorkflows = 64;   // `workflow` names of GET /v1/api/demand
inline constexpr size_t kMaxDemandGroups = 256;     // groups in its answer
inline constexpr int64_t kMaxStepWalltimeS = 604800;  // step `walltime_s` (a week)
inline constexpr int64_t kMaxStepAttempts = 100;      // step `max_attempts`
inline constexpr size_t kMaxHostBytes = 255;          // register `host`, a free node's `name`
inline constexpr size_t kMaxVersionBytes = 128;       // register `version`
inline constexpr size_t kMaxDefinitions = 1024;       // register `definitions`
inline constexpr size_t kMaxWorkflowSteps = 256;      // a definition's `steps`
inline constexpr size_t kMaxStepNeeds = 256;          // a step's `needs`
inline constexpr size_t kMaxStepRetryOn = 16;         // a step's `retry_on`
inline constexpr size_t kMaxFreeNodes = 4096;         // claim `free.nodes`
inline constexpr size_t kMaxArtifacts = 1024;         // complete `artifacts`
inline constexpr size_t kMaxLeaseTokenBytes = 256;    // a lease's `lease_token`
inline constexpr size_t kMaxUriBytes = 4096;          // an artifact's `uri`
inline constexpr size_t kMaxMediaTypeBytes = 255;     // an artifact's `media_type`
inline constexpr size_t kMaxProgressBytes = 4 * 1024;      // heartbeat `progress`, serialized
inline constexpr size_t kMaxErrorMessageBytes = 4 * 1024;  // fail `message` (longer is cut)

// The coordinator reads request bodies with these (docs/protocol.md
// "Limits"); the client reads with JsonLimits' defaults: a lease wraps a
// run's values in a few more levels than a request may hold.
inline constexpr JsonLimits kServerJsonLimits{64, 64 * 1024};

}  // namespace scimesh

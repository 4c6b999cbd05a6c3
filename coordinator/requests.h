// The coordinator's parsers of the requests of docs/protocol.md: each checks
// types, ranges (protocol/wire_limits.h) and identifier rules and answers a
// 400 naming the field. They produce protocol/'s wire types (wire.h), but
// for register, whose definitions come out normalized (definition.h).
// coordinator/verdict_corpus_test.cc holds them to the client's parsers'
// verdicts. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "coordinator/api_error.h"
#include "coordinator/capacity.h"
#include "coordinator/definition.h"
#include "coordinator/json_input.h"
#include "coordinator/states.h"
#include "protocol/wire.h"
#include "protocol/wire_limits.h"

namespace scimesh::coordinator {

struct RegisterRequest {
  std::string worker_id;
  std::string host;
  std::string version;
  int64_t concurrency = 1;
  std::vector<WorkflowDefinition> definitions;
};

// The artifact upload's query names the caller as every lease call does.
struct LeaseIdentity {
  std::string worker_id;
  int64_t attempt = 0;
};

// kMaxProgressBytes, kMaxErrorMessageBytes and the ranges: protocol/wire_limits.h.

ApiResult<RegisterRequest> ParseRegisterRequest(const rapidjson::Value& body);
ApiResult<ClaimRequest> ParseClaimRequest(const rapidjson::Value& body);
// started and heartbeat share protocol/'s BeatRequest (progress on heartbeat only).
ApiResult<BeatRequest> ParseStartedRequest(const rapidjson::Value& body);
ApiResult<BeatRequest> ParseHeartbeatRequest(const rapidjson::Value& body);
ApiResult<CompleteRequest> ParseCompleteRequest(const rapidjson::Value& body);
ApiResult<FailRequest> ParseFailRequest(const rapidjson::Value& body);
ApiResult<RunCreateRequest> ParseRunCreateRequest(const rapidjson::Value& body);

// The artifact upload's query (`worker_id`, `attempt`), from their raw text.
ApiResult<LeaseIdentity> ParseArtifactQuery(const std::string* worker_id, const std::string* attempt);

}  // namespace scimesh::coordinator

// Typed requests of docs/protocol.md and their parsers: each checks types,
// ranges and identifier rules and answers a 400 naming the field. Pure;
// thread-safe.
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
#include "protocol/wire_limits.h"

namespace scimesh::coordinator {

struct RegisterRequest {
  std::string worker_id;
  std::string host;
  std::string version;
  int64_t concurrency = 1;
  std::vector<WorkflowDefinition> definitions;
};

struct ClaimRequest {
  std::string worker_id;
  int64_t max = 1;
  int64_t wait_ms = 0;
  std::optional<std::string> run_id;
  std::optional<FreeCapacity> free;
};

// Sent on every lease call.
struct LeaseIdentity {
  std::string worker_id;
  int64_t attempt = 0;
};

struct HeartbeatRequest {
  LeaseIdentity who;
  std::optional<std::string> progress_json;  // compact JSON text
};

struct CompleteRequest {
  LeaseIdentity who;
  std::string output_json;                   // an object
  std::optional<std::string> state_patch_json;  // an object
  std::optional<std::string> usage_json;        // an object
  std::vector<ArtifactRef> artifacts;
};

struct FailRequest {
  LeaseIdentity who;
  FailClass error_class = FailClass::kFatal;
  std::string message;  // cut to 4 KiB
};

struct RunCreateRequest {
  std::string workflow;
  std::optional<std::string> version;
  std::string input_json;               // an object
  std::string correlation_json = "null";  // any JSON
  std::optional<int64_t> deadline_s;
};

// kMaxProgressBytes, kMaxErrorMessageBytes and the ranges: protocol/wire_limits.h.

ApiResult<RegisterRequest> ParseRegisterRequest(const rapidjson::Value& body);
ApiResult<ClaimRequest> ParseClaimRequest(const rapidjson::Value& body);
ApiResult<LeaseIdentity> ParseStartedRequest(const rapidjson::Value& body);
ApiResult<HeartbeatRequest> ParseHeartbeatRequest(const rapidjson::Value& body);
ApiResult<CompleteRequest> ParseCompleteRequest(const rapidjson::Value& body);
ApiResult<FailRequest> ParseFailRequest(const rapidjson::Value& body);
ApiResult<RunCreateRequest> ParseRunCreateRequest(const rapidjson::Value& body);

// The artifact upload's query (`worker_id`, `attempt`), from their raw text.
ApiResult<LeaseIdentity> ParseArtifactQuery(const std::string* worker_id, const std::string* attempt);

}  // namespace scimesh::coordinator

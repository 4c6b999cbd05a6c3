// The coordinator's reading of request bodies: protocol/'s parsers
// (protocol/wire_json.h, one wire model with the client) under the server's
// JSON limits (kServerJsonLimits), their refusals as 400s naming the field's
// path (docs/protocol.md "Errors"), register's definitions normalized
// (definition.h), and the artifact upload's query.
// coordinator/verdict_corpus_test.cc holds the client and the coordinator to
// the same verdicts. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "coordinator/api_error.h"
#include "coordinator/definition.h"
#include "protocol/util/status.h"
#include "protocol/wire/wire.h"

namespace scimesh::coordinator {

// A register request as the ledger takes it.
struct Registration {
  RegisterRequest request;                      // protocol/wire.h's, as sent
  std::vector<WorkflowDefinition> definitions;  // request.definitions normalized, in order
};

// The artifact upload's query names the caller as every lease call does.
struct LeaseIdentity {
  std::string worker_id;
  int64_t attempt = 0;
};

// The 400 answering a parser's refusal: `field` is the Status's field path
// ("" when the body as a whole is wrong), `message` why.
ApiError BadRequestFrom(const Status& refusal);

ApiResult<Registration> ReadRegisterRequest(std::string_view body);
ApiResult<ClaimRequest> ReadClaimRequest(std::string_view body);
// started and heartbeat share protocol/'s BeatRequest; started ignores `progress`.
ApiResult<BeatRequest> ReadStartedRequest(std::string_view body);
ApiResult<BeatRequest> ReadHeartbeatRequest(std::string_view body);
ApiResult<CompleteRequest> ReadCompleteRequest(std::string_view body);
ApiResult<FailRequest> ReadFailRequest(std::string_view body);
ApiResult<RunCreateRequest> ReadRunCreateRequest(std::string_view body);

// The artifact upload's query (`worker_id`, `attempt`), from their raw text.
ApiResult<LeaseIdentity> ParseArtifactQuery(const std::string* worker_id, const std::string* attempt);

// GET /v1/api/runs's query: `workflow` (an identifier), `state` (a run
// state), `limit` (1..kMaxRunList, default kDefaultRunList), each at most
// once; a 400 names the parameter. Other parameters are ignored.
ApiResult<RunListQuery> ParseRunListQuery(const std::multimap<std::string, std::string>& params);

// GET /v1/api/demand's query: `workflow`, repeatable, each value a name or a
// comma-separated list of them (identifiers), at most kMaxDemandWorkflows in
// all, sorted and without repeats; a 400 names `workflow`. Others are ignored.
ApiResult<DemandQuery> ParseDemandQuery(const std::multimap<std::string, std::string>& params);

}  // namespace scimesh::coordinator

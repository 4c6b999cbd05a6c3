// JSON parsers and writers for every wire type in wire.h, exactly as
// docs/protocol.md and its examples in docs/protocol/ spell them.
//
// Parsers return Status::InvalidField naming the field's path
// ("definitions[0].steps[2].id", "free.nodes[1].cpus"; "" for the text as a
// whole) on anything the contract does not allow (missing field, wrong type,
// out of range, bad identifier), and refuse malformed or over-deep JSON. The
// request parsers hold every rule and range of docs/protocol.md (wire_limits.h)
// and are the coordinator's too: it passes its JSON limits
// (kServerJsonLimits), the client reads with the defaults. Writers omit unset
// optional fields. Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "protocol/util/status.h"
#include "protocol/wire/wire.h"
#include "protocol/wire/wire_limits.h"

namespace scimesh {

std::string SerializeRegisterRequest(const RegisterRequest& r);
Result<RegisterRequest> ParseRegisterRequest(std::string_view json, const JsonLimits& limits = {});
// One `definitions[i]` object on its own (the coordinator's stored form).
Result<WorkflowDefinition> ParseWorkflowDefinition(std::string_view json, const JsonLimits& limits = {});
std::string SerializeRegisterResponse(const RegisterResponse& r);
Result<RegisterResponse> ParseRegisterResponse(std::string_view json);

std::string SerializeClaimRequest(const ClaimRequest& r);
Result<ClaimRequest> ParseClaimRequest(std::string_view json, const JsonLimits& limits = {});
std::string SerializeClaimResponse(const ClaimResponse& r);
// Every lease is checked (identifiers, checksums, artifact names); one bad
// lease fails the whole response, so nothing unchecked ever reaches a path.
Result<ClaimResponse> ParseClaimResponse(std::string_view json);

// lease.json in the attempt directory: the lease plus `coordinator_url`.
std::string SerializeLease(const Lease& lease, std::optional<std::string_view> coordinator_url = {});
Result<Lease> ParseLease(std::string_view json);

// started (no progress) and heartbeat requests (`progress` at most
// kMaxProgressBytes serialized).
std::string SerializeBeatRequest(const BeatRequest& r);
Result<BeatRequest> ParseBeatRequest(std::string_view json, const JsonLimits& limits = {});
std::string SerializeExtendResponse(const ExtendResponse& r);
Result<ExtendResponse> ParseExtendResponse(std::string_view json);

std::string SerializeCompleteRequest(const CompleteRequest& r);
Result<CompleteRequest> ParseCompleteRequest(std::string_view json, const JsonLimits& limits = {});
std::string SerializeCompleteResponse(const CompleteResponse& r);
Result<CompleteResponse> ParseCompleteResponse(std::string_view json);

std::string SerializeFailRequest(const FailRequest& r);
// A `message` longer than kMaxErrorMessageBytes is cut, not refused.
Result<FailRequest> ParseFailRequest(std::string_view json, const JsonLimits& limits = {});
std::string SerializeFailResponse(const FailResponse& r);
Result<FailResponse> ParseFailResponse(std::string_view json);

std::string SerializeArtifactRef(const ArtifactRef& a);
Result<ArtifactRef> ParseArtifactRef(std::string_view json);

std::string SerializeErrorBody(const ErrorBody& e);
Result<ErrorBody> ParseErrorBody(std::string_view json);

std::string SerializeRunCreateRequest(const RunCreateRequest& r);
Result<RunCreateRequest> ParseRunCreateRequest(std::string_view json, const JsonLimits& limits = {});
std::string SerializeRunStatus(const RunStatus& r);
Result<RunStatus> ParseRunStatus(std::string_view json);
std::string SerializeRunView(const RunView& r);
Result<RunView> ParseRunView(std::string_view json);
std::string SerializeJournal(const Journal& j);
Result<Journal> ParseJournal(std::string_view json);
std::string SerializeRunList(const RunList& list);
Result<RunList> ParseRunList(std::string_view json);
// The demand answer; the parser refuses more than kMaxDemandGroups groups, a
// count outside 0..kMaxWireInt and names that break the identifier rules.
std::string SerializeQueuedDemand(const QueuedDemand& d);
Result<QueuedDemand> ParseQueuedDemand(std::string_view json);

}  // namespace scimesh

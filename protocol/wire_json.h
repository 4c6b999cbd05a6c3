// JSON parsers and writers for every wire type in wire.h, exactly as
// docs/protocol.md and its examples in docs/protocol/ spell them.
//
// Parsers return kInvalidArgument naming the field path on anything the
// contract does not allow (missing field, wrong type, bad identifier), and
// refuse malformed or over-deep JSON. Writers omit unset optional fields.
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "protocol/status.h"
#include "protocol/wire.h"

namespace scimesh {

std::string SerializeRegisterRequest(const RegisterRequest& r);
Result<RegisterRequest> ParseRegisterRequest(std::string_view json);
std::string SerializeRegisterResponse(const RegisterResponse& r);
Result<RegisterResponse> ParseRegisterResponse(std::string_view json);

std::string SerializeClaimRequest(const ClaimRequest& r);
Result<ClaimRequest> ParseClaimRequest(std::string_view json);
std::string SerializeClaimResponse(const ClaimResponse& r);
// Every lease is checked (identifiers, checksums, artifact names); one bad
// lease fails the whole response, so nothing unchecked ever reaches a path.
Result<ClaimResponse> ParseClaimResponse(std::string_view json);

// lease.json in the attempt directory: the lease plus `coordinator_url`.
std::string SerializeLease(const Lease& lease, std::optional<std::string_view> coordinator_url = {});
Result<Lease> ParseLease(std::string_view json);

// started (no progress) and heartbeat requests.
std::string SerializeBeatRequest(const BeatRequest& r);
Result<BeatRequest> ParseBeatRequest(std::string_view json);
std::string SerializeExtendResponse(const ExtendResponse& r);
Result<ExtendResponse> ParseExtendResponse(std::string_view json);

std::string SerializeCompleteRequest(const CompleteRequest& r);
Result<CompleteRequest> ParseCompleteRequest(std::string_view json);
std::string SerializeCompleteResponse(const CompleteResponse& r);
Result<CompleteResponse> ParseCompleteResponse(std::string_view json);

std::string SerializeFailRequest(const FailRequest& r);
Result<FailRequest> ParseFailRequest(std::string_view json);
std::string SerializeFailResponse(const FailResponse& r);
Result<FailResponse> ParseFailResponse(std::string_view json);

std::string SerializeArtifactRef(const ArtifactRef& a);
Result<ArtifactRef> ParseArtifactRef(std::string_view json);

std::string SerializeErrorBody(const ErrorBody& e);
Result<ErrorBody> ParseErrorBody(std::string_view json);

std::string SerializeRunCreateRequest(const RunCreateRequest& r);
Result<RunCreateRequest> ParseRunCreateRequest(std::string_view json);
std::string SerializeRunStatus(const RunStatus& r);
Result<RunStatus> ParseRunStatus(std::string_view json);
std::string SerializeRunView(const RunView& r);
Result<RunView> ParseRunView(std::string_view json);
std::string SerializeJournal(const Journal& j);
Result<Journal> ParseJournal(std::string_view json);

}  // namespace scimesh

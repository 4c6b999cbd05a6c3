// JSON for the lease calls (started, heartbeat, complete, fail), artifact
// references and the error body.
#include "protocol/util/json_members.h"
#include "protocol/wire/identifiers.h"
#include "protocol/wire/wire_json.h"
#include "protocol/wire/wire_json_parts.h"
#include "protocol/wire/wire_limits.h"

namespace scimesh {
namespace {

// worker_id and attempt of every lease call, by the coordinator's rules.
constexpr auto kWhoMembers = [](auto& m, auto& r) {
  m.String("worker_id", r.worker_id, CheckWorkerId);
  m.IntIn("attempt", r.attempt, 1, kMaxWireInt);
};

constexpr auto kBeatMembers = [](auto& m, auto& r) {
  kWhoMembers(m, r);
  m.OptRaw("progress", r.progress_json);
  m.Check([&](const auto& o) {
    if (!r.progress_json || r.progress_json->size() <= kMaxProgressBytes) return Status::Ok();
    return Status::InvalidField(o.FieldPath("progress"), "is larger than 4 KiB serialized");
  });
};

constexpr auto kExtendMembers = [](auto& m, auto& r) {
  m.String("lease_expires_at", r.lease_expires_at);
  m.Int("lease_ttl_ms", r.lease_ttl_ms);
  m.Check([&](const auto&) {
    return r.lease_ttl_ms < 1 ? Status::InvalidArgument("lease_ttl_ms: must be positive") : Status::Ok();
  });
};

constexpr auto kCompleteMembers = [](auto& m, auto& r) {
  kWhoMembers(m, r);
  m.RawObject("output", r.output_json);
  m.OptRawObject("state_patch", r.state_patch_json);
  m.OptRawObject("usage", r.usage_json);
  m.OptObjects("artifacts", r.artifacts, kArtifactMembers, kMaxArtifacts);
};

constexpr auto kOutcomeMembers = [](auto& m, auto& r) {
  m.String("outcome", r.outcome);
};

// The fail request's `error` object: its members belong to the request.
constexpr auto kFailErrorMembers = [](auto& m, auto& r) {
  m.Enum("class", r.error_class, ParseFailClass, FailClassName,
         "must be one of retryable, timeout, cancelled, node_failure, invalid_output, input_checksum, fatal, "
         "unservable, preempted");
  m.StringCut("message", r.message, kMaxErrorMessageBytes);  // cut, not refused (docs/protocol.md "Limits")
};

constexpr auto kFailMembers = [](auto& m, auto& r) {
  kWhoMembers(m, r);
  m.Object("error", r, kFailErrorMembers);
};

constexpr auto kFailResponseMembers = [](auto& m, auto& r) {
  m.String("outcome", r.outcome);
  m.Bool("requeued", r.requeued);
  m.OptString("next_attempt_not_before", r.next_attempt_not_before, Unset::kOmit);
};

constexpr auto kErrorBodyMembers = [](auto& m, auto& e) {
  m.String("error", e.error);
  m.OptString("reason", e.reason, Unset::kOmit);
  m.OptString("outcome", e.outcome, Unset::kOmit);
  m.OptString("field", e.field, Unset::kOmit);
  m.OptStringOr("message", e.message, "");
};

}  // namespace

std::string SerializeBeatRequest(const BeatRequest& r) { return MembersText(r, kBeatMembers); }

Result<BeatRequest> ParseBeatRequest(std::string_view json, const JsonLimits& limits) {
  return ParseMembers<BeatRequest>(json, "lease call", limits, kBeatMembers);
}

std::string SerializeExtendResponse(const ExtendResponse& r) { return MembersText(r, kExtendMembers); }

Result<ExtendResponse> ParseExtendResponse(std::string_view json) {
  return ParseMembers<ExtendResponse>(json, "lease extension", {}, kExtendMembers);
}

std::string SerializeCompleteRequest(const CompleteRequest& r) { return MembersText(r, kCompleteMembers); }

Result<CompleteRequest> ParseCompleteRequest(std::string_view json, const JsonLimits& limits) {
  return ParseMembers<CompleteRequest>(json, "complete request", limits, kCompleteMembers);
}

std::string SerializeCompleteResponse(const CompleteResponse& r) { return MembersText(r, kOutcomeMembers); }

Result<CompleteResponse> ParseCompleteResponse(std::string_view json) {
  return ParseMembers<CompleteResponse>(json, "complete response", {}, kOutcomeMembers);
}

std::string SerializeFailRequest(const FailRequest& r) { return MembersText(r, kFailMembers); }

Result<FailRequest> ParseFailRequest(std::string_view json, const JsonLimits& limits) {
  return ParseMembers<FailRequest>(json, "fail request", limits, kFailMembers);
}

std::string SerializeFailResponse(const FailResponse& r) { return MembersText(r, kFailResponseMembers); }

Result<FailResponse> ParseFailResponse(std::string_view json) {
  return ParseMembers<FailResponse>(json, "fail response", {}, kFailResponseMembers);
}

std::string SerializeArtifactRef(const ArtifactRef& a) { return MembersText(a, kArtifactMembers); }

Result<ArtifactRef> ParseArtifactRef(std::string_view json) {
  return ParseMembers<ArtifactRef>(json, "artifact", {}, kArtifactMembers);
}

std::string SerializeErrorBody(const ErrorBody& e) { return MembersText(e, kErrorBodyMembers); }

Result<ErrorBody> ParseErrorBody(std::string_view json) {
  return ParseMembers<ErrorBody>(json, "error body", {}, kErrorBodyMembers);
}

}  // namespace scimesh

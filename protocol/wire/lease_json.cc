// JSON for claim requests/responses and the lease (docs/protocol.md "claim", "The lease").
#include <limits>

#include "protocol/util/json_members.h"
#include "protocol/wire/identifiers.h"
#include "protocol/wire/wire_json.h"
#include "protocol/wire/wire_json_parts.h"
#include "protocol/wire/wire_limits.h"

namespace scimesh {
namespace {

Status CheckHex(std::string_view value, size_t length, std::string_view field) {
  bool ok = value.size() == length;
  for (char c : value) ok = ok && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
  if (ok) return Status::Ok();
  return Status::InvalidArgument(std::string(field) + ": must be " + std::to_string(length) +
                                 " lowercase hex digits");
}
Status CheckTraceId(std::string_view value, std::string_view field) { return CheckHex(value, 32, field); }
Status CheckSpanId(std::string_view value, std::string_view field) { return CheckHex(value, 16, field); }

// The lease token: one word of visible ASCII (it goes into a header).
Status CheckVisibleWord(std::string_view value, std::string_view field) {
  for (char c : value) {
    if (c <= 0x20 || c >= 0x7f) return Status::InvalidArgument(std::string(field) + ": not one word of visible ASCII");
  }
  return Status::Ok();
}

// An input artifact: its step, then the rules of every artifact reference.
constexpr auto kInputArtifactMembers = [](auto& m, auto& a) {
  m.String("step_id", a.step_id, CheckIdentifier);
  kArtifactMembers(m, a);
};

constexpr auto kQuotaMembers = [](auto& m, auto& q) {
  m.IntIn("count", q.count, 0, kMaxWireInt);
  m.IntIn("bytes", q.bytes, 0, std::numeric_limits<int64_t>::max());
};

// The ids become URL segments and directory names: each is checked here.
constexpr auto kLeaseMembers = [](auto& m, auto& l) {
  m.String("lease_id", l.lease_id, CheckLeaseId);
  m.String("run_id", l.run_id, CheckRunId);
  m.String("step_id", l.step_id, CheckIdentifier);
  m.String("workflow", l.workflow, CheckIdentifier);
  m.String("version", l.version, CheckIdentifier);
  m.IntIn("attempt", l.attempt, 1, kMaxWireInt);
  m.Raw("input", l.input_json);
  m.RawObject("previous", l.previous_json);
  m.RawObject("run_state", l.run_state_json);
  m.RawOr("correlation", l.correlation_json, "null");
  m.String("idempotency_key", l.idempotency_key);
  m.String("trace_id", l.trace_id, CheckTraceId);
  m.String("span_id", l.span_id, CheckSpanId);
  m.Enum("delivery", l.delivery, ParseDelivery, DeliveryName, "must be at_least_once or at_most_once");
  m.Object("resources", l.resources, kStepResourcesMembers);
  m.Int("walltime_s", l.walltime_s);
  m.Objects("input_artifacts", l.input_artifacts, kInputArtifactMembers);
  m.ObjectOrDefault("artifact_quota", l.artifact_quota, kQuotaMembers);
  m.StringOrEmpty("lease_token", l.lease_token, 1, kMaxLeaseTokenBytes, CheckVisibleWord);
  m.Int("lease_ttl_ms", l.lease_ttl_ms);
  m.Int("heartbeat_ms", l.heartbeat_ms);
  m.String("lease_expires_at", l.lease_expires_at);
  m.Check([&](const auto& o) {
    if (l.lease_ttl_ms >= 1 && l.heartbeat_ms >= 1) return Status::Ok();
    return Status::InvalidArgument(o.path() + ": lease_ttl_ms and heartbeat_ms must be positive");
  });
};

constexpr auto kFreeNodeMembers = [](auto& m, auto& n) {
  m.StringIn("name", n.name, 1, kMaxHostBytes);
  m.IntIn("cpus", n.cpus, 0, kMaxWireInt);
  m.IntIn("gpus", n.gpus, 0, kMaxWireInt);
};

constexpr auto kFreeMembers = [](auto& m, auto& f) {
  m.Objects("nodes", f.nodes, kFreeNodeMembers, kMaxFreeNodes);
  m.IntIn("walltime_s", f.walltime_s, 0, kMaxWireInt);
};

constexpr auto kClaimMembers = [](auto& m, auto& r) {
  m.String("worker_id", r.worker_id, CheckWorkerId);
  m.IntIn("max", r.max, 1, kMaxClaimMax);
  m.IntInOr("wait_ms", r.wait_ms, 0, kMaxClaimWaitMs, 0);
  m.OptString("run_id", r.run_id, Unset::kOmit, CheckRunId);
  m.OptObject("free", r.free, kFreeMembers, Unset::kOmit);
};

constexpr auto kClaimResponseMembers = [](auto& m, auto& r) {
  m.Objects("leases", r.leases, kLeaseMembers);
};

}  // namespace

std::string SerializeClaimRequest(const ClaimRequest& r) { return MembersText(r, kClaimMembers); }

Result<ClaimRequest> ParseClaimRequest(std::string_view json, const JsonLimits& limits) {
  return ParseMembers<ClaimRequest>(json, "claim request", limits, kClaimMembers);
}

std::string SerializeClaimResponse(const ClaimResponse& r) { return MembersText(r, kClaimResponseMembers); }

Result<ClaimResponse> ParseClaimResponse(std::string_view json) {
  return ParseMembers<ClaimResponse>(json, "claim response", {}, kClaimResponseMembers);
}

std::string SerializeLease(const Lease& lease, std::optional<std::string_view> coordinator_url) {
  return ObjectText([&](JsonWriter& w) {
    MemberWriter m(w);
    kLeaseMembers(m, lease);
    if (coordinator_url) WriteString(w, "coordinator_url", *coordinator_url);
  });
}

Result<Lease> ParseLease(std::string_view json) { return ParseMembers<Lease>(json, "lease", {}, kLeaseMembers); }

}  // namespace scimesh

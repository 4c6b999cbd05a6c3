// JSON for claim requests/responses and the lease (docs/protocol.md "claim", "The lease").
#include <limits>

#include "protocol/util/json_io.h"
#include "protocol/wire/identifiers.h"
#include "protocol/wire/wire_json.h"
#include "protocol/wire/wire_json_parts.h"
#include "protocol/wire/wire_limits.h"

namespace scimesh {
namespace {

void WriteLease(JsonWriter& w, const Lease& l, std::optional<std::string_view> coordinator_url) {
  w.StartObject();
  WriteString(w, "lease_id", l.lease_id);
  WriteString(w, "run_id", l.run_id);
  WriteString(w, "step_id", l.step_id);
  WriteString(w, "workflow", l.workflow);
  WriteString(w, "version", l.version);
  WriteInt(w, "attempt", l.attempt);
  WriteRaw(w, "input", l.input_json);
  WriteRaw(w, "previous", l.previous_json);
  WriteRaw(w, "run_state", l.run_state_json);
  WriteRaw(w, "correlation", l.correlation_json);
  WriteString(w, "idempotency_key", l.idempotency_key);
  WriteString(w, "trace_id", l.trace_id);
  WriteString(w, "span_id", l.span_id);
  WriteString(w, "delivery", DeliveryName(l.delivery));
  w.Key("resources");
  WriteResources(w, l.resources);
  WriteInt(w, "walltime_s", l.walltime_s);
  WriteArray(w, "input_artifacts", l.input_artifacts, [](JsonWriter& aw, const InputArtifact& a) {
    aw.StartObject();
    WriteString(aw, "step_id", a.step_id);
    WriteArtifactMembers(aw, ArtifactRef{a.name, a.uri, a.sha256, a.size, a.media_type});
    aw.EndObject();
  });
  WriteObject(w, "artifact_quota", [&](JsonWriter& q) {
    WriteInt(q, "count", l.artifact_quota.count);
    WriteInt(q, "bytes", l.artifact_quota.bytes);
  });
  if (!l.lease_token.empty()) WriteString(w, "lease_token", l.lease_token);
  WriteInt(w, "lease_ttl_ms", l.lease_ttl_ms);
  WriteInt(w, "heartbeat_ms", l.heartbeat_ms);
  WriteString(w, "lease_expires_at", l.lease_expires_at);
  if (coordinator_url) WriteString(w, "coordinator_url", *coordinator_url);
  w.EndObject();
}

Status CheckHex(std::string_view value, size_t length, const std::string& field) {
  bool ok = value.size() == length;
  for (char c : value) ok = ok && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
  if (ok) return Status::Ok();
  return Status::InvalidArgument(field + ": must be " + std::to_string(length) +
                                 " lowercase hex digits");
}

// An input artifact: its step, then the rules of every artifact reference.
Result<InputArtifact> InputArtifactFrom(const JsonObject& o) {
  InputArtifact a;
  SCIMESH_ASSIGN_OR_RETURN(a.step_id, IdentifierFrom(o, "step_id"));
  SCIMESH_ASSIGN_OR_RETURN(ArtifactRef ref, ArtifactRefFrom(o));
  a.name = std::move(ref.name);
  a.uri = std::move(ref.uri);
  a.sha256 = std::move(ref.sha256);
  a.size = ref.size;
  a.media_type = std::move(ref.media_type);
  return a;
}

Result<Lease> LeaseFrom(const JsonObject& o) {
  Lease l;
  SCIMESH_ASSIGN_OR_RETURN(l.lease_id, o.String("lease_id"));
  SCIMESH_ASSIGN_OR_RETURN(l.run_id, o.String("run_id"));
  SCIMESH_ASSIGN_OR_RETURN(l.step_id, o.String("step_id"));
  SCIMESH_ASSIGN_OR_RETURN(l.workflow, o.String("workflow"));
  SCIMESH_ASSIGN_OR_RETURN(l.version, o.String("version"));
  SCIMESH_ASSIGN_OR_RETURN(l.attempt, o.Int("attempt"));
  SCIMESH_ASSIGN_OR_RETURN(l.input_json, o.Raw("input"));
  SCIMESH_ASSIGN_OR_RETURN(l.previous_json, o.RawObject("previous"));
  SCIMESH_ASSIGN_OR_RETURN(l.run_state_json, o.RawObject("run_state"));
  l.correlation_json = o.OptRaw("correlation").value_or("null");
  SCIMESH_ASSIGN_OR_RETURN(l.idempotency_key, o.String("idempotency_key"));
  SCIMESH_ASSIGN_OR_RETURN(l.trace_id, o.String("trace_id"));
  SCIMESH_ASSIGN_OR_RETURN(l.span_id, o.String("span_id"));
  SCIMESH_ASSIGN_OR_RETURN(std::string delivery, o.String("delivery"));
  SCIMESH_ASSIGN_OR_RETURN(JsonObject resources, o.Object("resources"));
  SCIMESH_ASSIGN_OR_RETURN(l.resources, StepResourcesFrom(resources));
  SCIMESH_ASSIGN_OR_RETURN(l.walltime_s, o.Int("walltime_s"));
  SCIMESH_RETURN_IF_ERROR(o.Objects("input_artifacts", SIZE_MAX, &l.input_artifacts, InputArtifactFrom));
  if (o.Has("artifact_quota")) {
    SCIMESH_ASSIGN_OR_RETURN(JsonObject q, o.Object("artifact_quota"));
    SCIMESH_ASSIGN_OR_RETURN(l.artifact_quota.count, q.IntIn("count", 0, kMaxWireInt));
    SCIMESH_ASSIGN_OR_RETURN(l.artifact_quota.bytes, q.IntIn("bytes", 0, std::numeric_limits<int64_t>::max()));
  }
  SCIMESH_ASSIGN_OR_RETURN(auto lease_token, o.OptStringIn("lease_token", 1, kMaxLeaseTokenBytes));
  l.lease_token = lease_token.value_or("");
  for (char c : l.lease_token) {
    if (c <= 0x20 || c >= 0x7f) return Status::InvalidArgument(o.FieldPath("lease_token") + ": not one word of visible ASCII");
  }
  SCIMESH_ASSIGN_OR_RETURN(l.lease_ttl_ms, o.Int("lease_ttl_ms"));
  SCIMESH_ASSIGN_OR_RETURN(l.heartbeat_ms, o.Int("heartbeat_ms"));
  SCIMESH_ASSIGN_OR_RETURN(l.lease_expires_at, o.String("lease_expires_at"));

  // The ids become URL segments and directory names: check them all here.
  SCIMESH_RETURN_IF_ERROR(CheckLeaseId(l.lease_id, o.FieldPath("lease_id")));
  SCIMESH_RETURN_IF_ERROR(CheckRunId(l.run_id, o.FieldPath("run_id")));
  SCIMESH_RETURN_IF_ERROR(CheckIdentifier(l.step_id, o.FieldPath("step_id")));
  SCIMESH_RETURN_IF_ERROR(CheckIdentifier(l.workflow, o.FieldPath("workflow")));
  SCIMESH_RETURN_IF_ERROR(CheckIdentifier(l.version, o.FieldPath("version")));
  SCIMESH_RETURN_IF_ERROR(CheckHex(l.trace_id, 32, o.FieldPath("trace_id")));
  SCIMESH_RETURN_IF_ERROR(CheckHex(l.span_id, 16, o.FieldPath("span_id")));
  if (l.attempt < 1) return Status::InvalidArgument(o.FieldPath("attempt") + ": must be >= 1");
  auto d = ParseDelivery(delivery);
  if (!d) return Status::InvalidArgument(o.FieldPath("delivery") + ": unknown '" + delivery + "'");
  l.delivery = *d;
  if (l.lease_ttl_ms < 1 || l.heartbeat_ms < 1) {
    return Status::InvalidArgument(o.path() + ": lease_ttl_ms and heartbeat_ms must be positive");
  }
  return l;
}

Result<FreeNode> FreeNodeFrom(const JsonObject& n) {
  FreeNode node;
  SCIMESH_ASSIGN_OR_RETURN(node.name, n.StringIn("name", 1, kMaxHostBytes));
  SCIMESH_ASSIGN_OR_RETURN(node.cpus, n.IntIn("cpus", 0, kMaxWireInt));
  SCIMESH_ASSIGN_OR_RETURN(node.gpus, n.IntIn("gpus", 0, kMaxWireInt));
  return node;
}

}  // namespace

void WriteResources(JsonWriter& w, const Resources& r) {
  w.StartObject();
  WriteInt(w, "nodes", r.nodes);
  WriteInt(w, "ranks_per_node", r.ranks_per_node);
  WriteInt(w, "cpus_per_rank", r.cpus_per_rank);
  WriteInt(w, "gpus_per_rank", r.gpus_per_rank);
  w.EndObject();
}

Result<Resources> StepResourcesFrom(const JsonObject& o) {
  Resources r;
  SCIMESH_ASSIGN_OR_RETURN(r.nodes, o.Int("nodes"));
  SCIMESH_ASSIGN_OR_RETURN(r.ranks_per_node, o.Int("ranks_per_node"));
  SCIMESH_ASSIGN_OR_RETURN(r.cpus_per_rank, o.Int("cpus_per_rank"));
  SCIMESH_ASSIGN_OR_RETURN(r.gpus_per_rank, o.Int("gpus_per_rank"));
  if (r.nodes < 1 || r.ranks_per_node < 1 || r.cpus_per_rank < 1 || r.gpus_per_rank < 0) {
    return Status::InvalidArgument(o.path() + ": resources out of range");
  }
  return r;
}

std::string SerializeClaimRequest(const ClaimRequest& r) {
  return ObjectText([&](JsonWriter& w) {
    WriteString(w, "worker_id", r.worker_id);
    WriteInt(w, "max", r.max);
    WriteInt(w, "wait_ms", r.wait_ms);
    if (r.run_id) WriteString(w, "run_id", *r.run_id);
    if (!r.free) return;
    WriteObject(w, "free", [&](JsonWriter& f) {
      WriteArray(f, "nodes", r.free->nodes, [](JsonWriter& nw, const FreeNode& n) {
        nw.StartObject();
        WriteString(nw, "name", n.name);
        WriteInt(nw, "cpus", n.cpus);
        WriteInt(nw, "gpus", n.gpus);
        nw.EndObject();
      });
      WriteInt(f, "walltime_s", r.free->walltime_s);
    });
  });
}

Result<ClaimRequest> ParseClaimRequest(std::string_view json, const JsonLimits& limits) {
  return ReadObjectText(json, "claim request", limits, [](const JsonObject& o) -> Result<ClaimRequest> {
    ClaimRequest r;
    SCIMESH_ASSIGN_OR_RETURN(r.worker_id, o.String("worker_id"));
    SCIMESH_RETURN_IF_ERROR(CheckWorkerId(r.worker_id, o.FieldPath("worker_id")));
    SCIMESH_ASSIGN_OR_RETURN(r.max, o.IntIn("max", 1, kMaxClaimMax));
    SCIMESH_ASSIGN_OR_RETURN(auto wait, o.OptIntIn("wait_ms", 0, kMaxClaimWaitMs));
    r.wait_ms = wait.value_or(0);
    SCIMESH_ASSIGN_OR_RETURN(r.run_id, o.OptString("run_id"));
    if (r.run_id) SCIMESH_RETURN_IF_ERROR(CheckRunId(*r.run_id, o.FieldPath("run_id")));
    if (!o.Has("free")) return r;
    SCIMESH_ASSIGN_OR_RETURN(JsonObject f, o.Object("free"));
    FreeCapacity free;
    SCIMESH_RETURN_IF_ERROR(f.Objects("nodes", kMaxFreeNodes, &free.nodes, FreeNodeFrom));
    SCIMESH_ASSIGN_OR_RETURN(free.walltime_s, f.IntIn("walltime_s", 0, kMaxWireInt));
    r.free = std::move(free);
    return r;
  });
}

std::string SerializeClaimResponse(const ClaimResponse& r) {
  return ObjectText([&](JsonWriter& w) {
    WriteArray(w, "leases", r.leases, [](JsonWriter& lw, const Lease& l) { WriteLease(lw, l, std::nullopt); });
  });
}

Result<ClaimResponse> ParseClaimResponse(std::string_view json) {
  return ReadObjectText(json, "claim response", {}, [](const JsonObject& o) -> Result<ClaimResponse> {
    ClaimResponse r;
    SCIMESH_RETURN_IF_ERROR(o.Objects("leases", SIZE_MAX, &r.leases, LeaseFrom));
    return r;
  });
}

std::string SerializeLease(const Lease& lease, std::optional<std::string_view> coordinator_url) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  WriteLease(w, lease, coordinator_url);
  return JsonText(buf);
}

Result<Lease> ParseLease(std::string_view json) { return ReadObjectText(json, "lease", {}, LeaseFrom); }

}  // namespace scimesh

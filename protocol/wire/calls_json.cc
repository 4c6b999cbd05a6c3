// JSON for the lease calls (started, heartbeat, complete, fail), artifact
// references and the error body.
#include "protocol/util/json_io.h"
#include "protocol/wire/identifiers.h"
#include "protocol/wire/wire_json.h"
#include "protocol/wire/wire_json_parts.h"
#include "protocol/wire/wire_limits.h"

namespace scimesh {
namespace {

// worker_id and attempt of every lease call, by the coordinator's rules.
Status ReadWho(const JsonObject& o, std::string& worker_id, int64_t& attempt) {
  SCIMESH_ASSIGN_OR_RETURN(worker_id, o.String("worker_id"));
  SCIMESH_RETURN_IF_ERROR(CheckWorkerId(worker_id, o.FieldPath("worker_id")));
  SCIMESH_ASSIGN_OR_RETURN(attempt, o.IntIn("attempt", 1, kMaxWireInt));
  return Status::Ok();
}

void WriteWho(JsonWriter& w, const std::string& worker_id, int64_t attempt) {
  WriteString(w, "worker_id", worker_id);
  WriteInt(w, "attempt", attempt);
}

}  // namespace

Result<std::string> IdentifierFrom(const JsonObject& o, const char* name) {
  SCIMESH_ASSIGN_OR_RETURN(std::string value, o.String(name));
  SCIMESH_RETURN_IF_ERROR(CheckIdentifier(value, o.FieldPath(name)));
  return value;
}

Result<ArtifactRef> ArtifactRefFrom(const JsonObject& o) {
  ArtifactRef a;
  SCIMESH_ASSIGN_OR_RETURN(a.name, o.String("name"));
  SCIMESH_RETURN_IF_ERROR(CheckArtifactName(a.name, o.FieldPath("name")));
  SCIMESH_ASSIGN_OR_RETURN(a.uri, o.StringIn("uri", 1, kMaxUriBytes));
  SCIMESH_ASSIGN_OR_RETURN(a.sha256, o.String("sha256"));
  SCIMESH_RETURN_IF_ERROR(CheckSha256(a.sha256, o.FieldPath("sha256")));
  SCIMESH_ASSIGN_OR_RETURN(a.size, o.IntIn("size", 0, INT64_MAX));
  SCIMESH_ASSIGN_OR_RETURN(a.media_type, o.StringIn("media_type", 1, kMaxMediaTypeBytes));
  return a;
}

void WriteArtifactMembers(JsonWriter& w, const ArtifactRef& a) {
  WriteString(w, "name", a.name);
  WriteString(w, "uri", a.uri);
  WriteString(w, "sha256", a.sha256);
  WriteInt(w, "size", a.size);
  WriteString(w, "media_type", a.media_type);
}

void WriteArtifactRef(JsonWriter& w, const ArtifactRef& a) {
  w.StartObject();
  WriteArtifactMembers(w, a);
  w.EndObject();
}

std::string SerializeBeatRequest(const BeatRequest& r) {
  return ObjectText([&](JsonWriter& w) {
    WriteWho(w, r.worker_id, r.attempt);
    if (r.progress_json) WriteRaw(w, "progress", *r.progress_json);
  });
}

Result<BeatRequest> ParseBeatRequest(std::string_view json, const JsonLimits& limits) {
  return ReadObjectText(json, "lease call", limits, [](const JsonObject& o) -> Result<BeatRequest> {
    BeatRequest r;
    SCIMESH_RETURN_IF_ERROR(ReadWho(o, r.worker_id, r.attempt));
    if (o.Has("progress")) r.progress_json = o.OptRaw("progress");
    if (r.progress_json && r.progress_json->size() > kMaxProgressBytes) {
      return Status::InvalidField(o.FieldPath("progress"), "is larger than 4 KiB serialized");
    }
    return r;
  });
}

std::string SerializeExtendResponse(const ExtendResponse& r) {
  return ObjectText([&](JsonWriter& w) {
    WriteString(w, "lease_expires_at", r.lease_expires_at);
    WriteInt(w, "lease_ttl_ms", r.lease_ttl_ms);
  });
}

Result<ExtendResponse> ParseExtendResponse(std::string_view json) {
  return ReadObjectText(json, "lease extension", {}, [](const JsonObject& o) -> Result<ExtendResponse> {
    ExtendResponse r;
    SCIMESH_ASSIGN_OR_RETURN(r.lease_expires_at, o.String("lease_expires_at"));
    SCIMESH_ASSIGN_OR_RETURN(r.lease_ttl_ms, o.Int("lease_ttl_ms"));
    if (r.lease_ttl_ms < 1) return Status::InvalidArgument("lease_ttl_ms: must be positive");
    return r;
  });
}

std::string SerializeCompleteRequest(const CompleteRequest& r) {
  return ObjectText([&](JsonWriter& w) {
    WriteWho(w, r.worker_id, r.attempt);
    WriteRaw(w, "output", r.output_json);
    if (r.state_patch_json) WriteRaw(w, "state_patch", *r.state_patch_json);
    if (r.usage_json) WriteRaw(w, "usage", *r.usage_json);
    WriteArray(w, "artifacts", r.artifacts, WriteArtifactRef);
  });
}

Result<CompleteRequest> ParseCompleteRequest(std::string_view json, const JsonLimits& limits) {
  return ReadObjectText(json, "complete request", limits, [](const JsonObject& o) -> Result<CompleteRequest> {
    CompleteRequest r;
    SCIMESH_RETURN_IF_ERROR(ReadWho(o, r.worker_id, r.attempt));
    SCIMESH_ASSIGN_OR_RETURN(r.output_json, o.RawObject("output"));
    if (o.Has("state_patch")) {
      SCIMESH_ASSIGN_OR_RETURN(r.state_patch_json, o.RawObject("state_patch"));
    }
    if (o.Has("usage")) {
      SCIMESH_ASSIGN_OR_RETURN(r.usage_json, o.RawObject("usage"));
    }
    if (o.Has("artifacts")) {
      SCIMESH_RETURN_IF_ERROR(o.Objects("artifacts", kMaxArtifacts, &r.artifacts, ArtifactRefFrom));
    }
    return r;
  });
}

std::string SerializeCompleteResponse(const CompleteResponse& r) {
  return ObjectText([&](JsonWriter& w) { WriteString(w, "outcome", r.outcome); });
}

Result<CompleteResponse> ParseCompleteResponse(std::string_view json) {
  return ReadObjectText(json, "complete response", {}, [](const JsonObject& o) -> Result<CompleteResponse> {
    CompleteResponse r;
    SCIMESH_ASSIGN_OR_RETURN(r.outcome, o.String("outcome"));
    return r;
  });
}

std::string SerializeFailRequest(const FailRequest& r) {
  return ObjectText([&](JsonWriter& w) {
    WriteWho(w, r.worker_id, r.attempt);
    WriteObject(w, "error", [&](JsonWriter& e) {
      WriteString(e, "class", FailClassName(r.error_class));
      WriteString(e, "message", r.message);
    });
  });
}

Result<FailRequest> ParseFailRequest(std::string_view json, const JsonLimits& limits) {
  return ReadObjectText(json, "fail request", limits, [](const JsonObject& o) -> Result<FailRequest> {
    FailRequest r;
    SCIMESH_RETURN_IF_ERROR(ReadWho(o, r.worker_id, r.attempt));
    SCIMESH_ASSIGN_OR_RETURN(JsonObject e, o.Object("error"));
    SCIMESH_ASSIGN_OR_RETURN(std::string cls, e.String("class"));
    auto c = ParseFailClass(cls);
    if (!c) {
      return Status::InvalidField(e.FieldPath("class"),
                                  "must be one of retryable, timeout, cancelled, node_failure, invalid_output, "
                                  "input_checksum, fatal, unservable, preempted");
    }
    r.error_class = *c;
    SCIMESH_ASSIGN_OR_RETURN(std::string message, e.String("message"));
    // Cut, not refused (docs/protocol.md "Limits").
    r.message = TruncateUtf8(message, kMaxErrorMessageBytes);
    return r;
  });
}

std::string SerializeFailResponse(const FailResponse& r) {
  return ObjectText([&](JsonWriter& w) {
    WriteString(w, "outcome", r.outcome);
    WriteBool(w, "requeued", r.requeued);
    if (r.next_attempt_not_before) WriteString(w, "next_attempt_not_before", *r.next_attempt_not_before);
  });
}

Result<FailResponse> ParseFailResponse(std::string_view json) {
  return ReadObjectText(json, "fail response", {}, [](const JsonObject& o) -> Result<FailResponse> {
    FailResponse r;
    SCIMESH_ASSIGN_OR_RETURN(r.outcome, o.String("outcome"));
    SCIMESH_ASSIGN_OR_RETURN(r.requeued, o.Bool("requeued"));
    SCIMESH_ASSIGN_OR_RETURN(r.next_attempt_not_before, o.OptString("next_attempt_not_before"));
    return r;
  });
}

std::string SerializeArtifactRef(const ArtifactRef& a) {
  return ObjectText([&](JsonWriter& w) { WriteArtifactMembers(w, a); });
}

Result<ArtifactRef> ParseArtifactRef(std::string_view json) {
  return ReadObjectText(json, "artifact", {}, ArtifactRefFrom);
}

std::string SerializeErrorBody(const ErrorBody& e) {
  return ObjectText([&](JsonWriter& w) {
    WriteString(w, "error", e.error);
    if (e.reason) WriteString(w, "reason", *e.reason);
    if (e.outcome) WriteString(w, "outcome", *e.outcome);
    if (e.field) WriteString(w, "field", *e.field);
    WriteString(w, "message", e.message);
  });
}

Result<ErrorBody> ParseErrorBody(std::string_view json) {
  return ReadObjectText(json, "error body", {}, [](const JsonObject& o) -> Result<ErrorBody> {
    ErrorBody e;
    SCIMESH_ASSIGN_OR_RETURN(e.error, o.String("error"));
    SCIMESH_ASSIGN_OR_RETURN(auto message, o.OptString("message"));
    e.message = message.value_or("");
    SCIMESH_ASSIGN_OR_RETURN(e.field, o.OptString("field"));
    SCIMESH_ASSIGN_OR_RETURN(e.reason, o.OptString("reason"));
    SCIMESH_ASSIGN_OR_RETURN(e.outcome, o.OptString("outcome"));
    return e;
  });
}

}  // namespace scimesh

// JSON for the lease calls (started, heartbeat, complete, fail), artifact
// references and the error body.
#include "protocol/util/json_io.h"
#include "protocol/wire/identifiers.h"
#include "protocol/wire/wire_json.h"
#include "protocol/wire/wire_json_parts.h"
#include "protocol/wire/wire_limits.h"

namespace scimesh {
namespace {

void WriteArtifact(JsonWriter& w, const ArtifactRef& a) {
  w.StartObject();
  WriteString(w, "name", a.name);
  WriteString(w, "uri", a.uri);
  WriteString(w, "sha256", a.sha256);
  WriteInt(w, "size", a.size);
  WriteString(w, "media_type", a.media_type);
  w.EndObject();
}

// worker_id and attempt of every lease call, by the coordinator's rules.
Status ReadWho(const JsonObject& o, std::string& worker_id, int64_t& attempt) {
  SCIMESH_ASSIGN_OR_RETURN(worker_id, o.String("worker_id"));
  SCIMESH_RETURN_IF_ERROR(CheckWorkerId(worker_id, o.FieldPath("worker_id")));
  SCIMESH_ASSIGN_OR_RETURN(attempt, o.IntIn("attempt", 1, kMaxWireInt));
  return Status::Ok();
}

}  // namespace

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

void WriteArtifactRef(JsonWriter& w, const ArtifactRef& a) { WriteArtifact(w, a); }

std::string SerializeBeatRequest(const BeatRequest& r) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  WriteString(w, "worker_id", r.worker_id);
  WriteInt(w, "attempt", r.attempt);
  if (r.progress_json) {
    WriteRaw(w, "progress", *r.progress_json);
  }
  w.EndObject();
  return JsonText(buf);
}

Result<BeatRequest> ParseBeatRequest(std::string_view json, const JsonLimits& limits) {
  SCIMESH_ASSIGN_OR_RETURN(auto doc, ParseJson(json, "lease call", limits));
  SCIMESH_ASSIGN_OR_RETURN(JsonObject o, JsonObject::Of(doc, ""));
  BeatRequest r;
  SCIMESH_RETURN_IF_ERROR(ReadWho(o, r.worker_id, r.attempt));
  if (o.Has("progress")) r.progress_json = o.OptRaw("progress");
  if (r.progress_json && r.progress_json->size() > kMaxProgressBytes) {
    return Status::InvalidField(o.FieldPath("progress"), "is larger than 4 KiB serialized");
  }
  return r;
}

std::string SerializeExtendResponse(const ExtendResponse& r) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  WriteString(w, "lease_expires_at", r.lease_expires_at);
  WriteInt(w, "lease_ttl_ms", r.lease_ttl_ms);
  w.EndObject();
  return JsonText(buf);
}

Result<ExtendResponse> ParseExtendResponse(std::string_view json) {
  SCIMESH_ASSIGN_OR_RETURN(auto doc, ParseJson(json, "lease extension"));
  SCIMESH_ASSIGN_OR_RETURN(JsonObject o, JsonObject::Of(doc, ""));
  ExtendResponse r;
  SCIMESH_ASSIGN_OR_RETURN(r.lease_expires_at, o.String("lease_expires_at"));
  SCIMESH_ASSIGN_OR_RETURN(r.lease_ttl_ms, o.Int("lease_ttl_ms"));
  if (r.lease_ttl_ms < 1) return Status::InvalidArgument("lease_ttl_ms: must be positive");
  return r;
}

std::string SerializeCompleteRequest(const CompleteRequest& r) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  WriteString(w, "worker_id", r.worker_id);
  WriteInt(w, "attempt", r.attempt);
  WriteRaw(w, "output", r.output_json);
  if (r.state_patch_json) {
    WriteRaw(w, "state_patch", *r.state_patch_json);
  }
  if (r.usage_json) {
    WriteRaw(w, "usage", *r.usage_json);
  }
  w.Key("artifacts");
  w.StartArray();
  for (const auto& a : r.artifacts) WriteArtifact(w, a);
  w.EndArray();
  w.EndObject();
  return JsonText(buf);
}

Result<CompleteRequest> ParseCompleteRequest(std::string_view json, const JsonLimits& limits) {
  SCIMESH_ASSIGN_OR_RETURN(auto doc, ParseJson(json, "complete request", limits));
  SCIMESH_ASSIGN_OR_RETURN(JsonObject o, JsonObject::Of(doc, ""));
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
    SCIMESH_ASSIGN_OR_RETURN(const rapidjson::Value* arts, o.ArrayIn("artifacts", 0, kMaxArtifacts));
    for (rapidjson::SizeType i = 0; i < arts->Size(); ++i) {
      SCIMESH_ASSIGN_OR_RETURN(JsonObject a, JsonObject::Of((*arts)[i], ElementPath("artifacts", i)));
      SCIMESH_ASSIGN_OR_RETURN(ArtifactRef ref, ArtifactRefFrom(a));
      r.artifacts.push_back(std::move(ref));
    }
  }
  return r;
}

std::string SerializeCompleteResponse(const CompleteResponse& r) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  WriteString(w, "outcome", r.outcome);
  w.EndObject();
  return JsonText(buf);
}

Result<CompleteResponse> ParseCompleteResponse(std::string_view json) {
  SCIMESH_ASSIGN_OR_RETURN(auto doc, ParseJson(json, "complete response"));
  SCIMESH_ASSIGN_OR_RETURN(JsonObject o, JsonObject::Of(doc, ""));
  CompleteResponse r;
  SCIMESH_ASSIGN_OR_RETURN(r.outcome, o.String("outcome"));
  return r;
}

std::string SerializeFailRequest(const FailRequest& r) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  WriteString(w, "worker_id", r.worker_id);
  WriteInt(w, "attempt", r.attempt);
  w.Key("error");
  w.StartObject();
  WriteString(w, "class", FailClassName(r.error_class));
  WriteString(w, "message", r.message);
  w.EndObject();
  w.EndObject();
  return JsonText(buf);
}

Result<FailRequest> ParseFailRequest(std::string_view json, const JsonLimits& limits) {
  SCIMESH_ASSIGN_OR_RETURN(auto doc, ParseJson(json, "fail request", limits));
  SCIMESH_ASSIGN_OR_RETURN(JsonObject o, JsonObject::Of(doc, ""));
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
}

std::string SerializeFailResponse(const FailResponse& r) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  WriteString(w, "outcome", r.outcome);
  w.Key("requeued");
  w.Bool(r.requeued);
  if (r.next_attempt_not_before) WriteString(w, "next_attempt_not_before", *r.next_attempt_not_before);
  w.EndObject();
  return JsonText(buf);
}

Result<FailResponse> ParseFailResponse(std::string_view json) {
  SCIMESH_ASSIGN_OR_RETURN(auto doc, ParseJson(json, "fail response"));
  SCIMESH_ASSIGN_OR_RETURN(JsonObject o, JsonObject::Of(doc, ""));
  FailResponse r;
  SCIMESH_ASSIGN_OR_RETURN(r.outcome, o.String("outcome"));
  SCIMESH_ASSIGN_OR_RETURN(r.requeued, o.Bool("requeued"));
  SCIMESH_ASSIGN_OR_RETURN(r.next_attempt_not_before, o.OptString("next_attempt_not_before"));
  return r;
}

std::string SerializeArtifactRef(const ArtifactRef& a) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  WriteArtifact(w, a);
  return JsonText(buf);
}

Result<ArtifactRef> ParseArtifactRef(std::string_view json) {
  SCIMESH_ASSIGN_OR_RETURN(auto doc, ParseJson(json, "artifact"));
  SCIMESH_ASSIGN_OR_RETURN(JsonObject o, JsonObject::Of(doc, ""));
  return ArtifactRefFrom(o);
}

std::string SerializeErrorBody(const ErrorBody& e) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  WriteString(w, "error", e.error);
  if (e.reason) WriteString(w, "reason", *e.reason);
  if (e.outcome) WriteString(w, "outcome", *e.outcome);
  if (e.field) WriteString(w, "field", *e.field);
  WriteString(w, "message", e.message);
  w.EndObject();
  return JsonText(buf);
}

Result<ErrorBody> ParseErrorBody(std::string_view json) {
  SCIMESH_ASSIGN_OR_RETURN(auto doc, ParseJson(json, "error body"));
  SCIMESH_ASSIGN_OR_RETURN(JsonObject o, JsonObject::Of(doc, ""));
  ErrorBody e;
  SCIMESH_ASSIGN_OR_RETURN(e.error, o.String("error"));
  SCIMESH_ASSIGN_OR_RETURN(auto message, o.OptString("message"));
  e.message = message.value_or("");
  SCIMESH_ASSIGN_OR_RETURN(e.field, o.OptString("field"));
  SCIMESH_ASSIGN_OR_RETURN(e.reason, o.OptString("reason"));
  SCIMESH_ASSIGN_OR_RETURN(e.outcome, o.OptString("outcome"));
  return e;
}

}  // namespace scimesh

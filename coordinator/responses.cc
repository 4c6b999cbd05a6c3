// Serializers for the replies and the error body.
#include "coordinator/responses.h"

#include "coordinator/json_text.h"
#include "coordinator/wire_time.h"

namespace scimesh::coordinator {
namespace {

std::string TextOf(rapidjson::StringBuffer& buf) { return std::string(buf.GetString(), buf.GetSize()); }

void WriteTime(JsonWriter& w, const std::optional<int64_t>& ms) {
  if (ms) {
    WriteString(w, FormatWireTime(*ms));
  } else {
    w.Null();
  }
}

void WriteOptString(JsonWriter& w, const std::optional<std::string>& s) {
  if (s) {
    WriteString(w, *s);
  } else {
    w.Null();
  }
}

void WriteArtifactFields(JsonWriter& w, const ArtifactRef& a) {
  w.Key("name");
  WriteString(w, a.name);
  w.Key("uri");
  WriteString(w, a.uri);
  w.Key("sha256");
  WriteString(w, a.sha256);
  w.Key("size");
  w.Int64(a.size);
  w.Key("media_type");
  WriteString(w, a.media_type);
}

void WriteResources(JsonWriter& w, const Resources& r) {
  w.StartObject();
  w.Key("nodes");
  w.Int64(r.nodes);
  w.Key("ranks_per_node");
  w.Int64(r.ranks_per_node);
  w.Key("cpus_per_rank");
  w.Int64(r.cpus_per_rank);
  w.Key("gpus_per_rank");
  w.Int64(r.gpus_per_rank);
  w.EndObject();
}

void WriteLease(JsonWriter& w, const Lease& l) {
  w.StartObject();
  w.Key("lease_id");
  WriteString(w, l.lease_id);
  w.Key("run_id");
  WriteString(w, l.run_id);
  w.Key("step_id");
  WriteString(w, l.step_id);
  w.Key("workflow");
  WriteString(w, l.workflow);
  w.Key("version");
  WriteString(w, l.version);
  w.Key("attempt");
  w.Int64(l.attempt);
  w.Key("input");
  WriteRaw(w, l.input_json);
  w.Key("previous");
  WriteRaw(w, l.previous_json);
  w.Key("run_state");
  WriteRaw(w, l.run_state_json);
  w.Key("correlation");
  WriteRaw(w, l.correlation_json);
  w.Key("idempotency_key");
  WriteString(w, l.idempotency_key);
  w.Key("trace_id");
  WriteString(w, l.trace_id);
  w.Key("span_id");
  WriteString(w, l.span_id);
  w.Key("delivery");
  WriteString(w, Name(l.delivery));
  w.Key("resources");
  WriteResources(w, l.resources);
  w.Key("walltime_s");
  w.Int64(l.walltime_s);
  w.Key("input_artifacts");
  w.StartArray();
  for (const auto& a : l.input_artifacts) {
    w.StartObject();
    w.Key("step_id");
    WriteString(w, a.step_id);
    WriteArtifactFields(w, a.ref);
    w.EndObject();
  }
  w.EndArray();
  w.Key("lease_ttl_ms");
  w.Int64(l.lease_ttl_ms);
  w.Key("heartbeat_ms");
  w.Int64(l.heartbeat_ms);
  w.Key("lease_expires_at");
  WriteString(w, FormatWireTime(l.expires_at_ms));
  w.EndObject();
}

void WriteAttempt(JsonWriter& w, const AttemptView& a) {
  w.StartObject();
  w.Key("attempt");
  w.Int64(a.attempt);
  w.Key("lease_id");
  WriteString(w, a.lease_id);
  w.Key("worker_id");
  WriteString(w, a.worker_id);
  w.Key("status");
  WriteString(w, Name(a.status));
  w.Key("claimed_at");
  WriteString(w, FormatWireTime(a.claimed_at));
  w.Key("started_at");
  WriteTime(w, a.started_at);
  w.Key("ended_at");
  WriteTime(w, a.ended_at);
  w.Key("error");
  if (a.error_class) {
    w.StartObject();
    w.Key("class");
    WriteString(w, *a.error_class);
    w.Key("message");
    WriteString(w, a.error_message.value_or(""));
    w.EndObject();
  } else {
    w.Null();
  }
  w.EndObject();
}

}  // namespace

std::string ToJson(const RegisterReply& r) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  w.Key("worker_id");
  WriteString(w, r.worker_id);
  w.Key("lease_ttl_ms");
  w.Int64(r.lease_ttl_ms);
  w.Key("heartbeat_ms");
  w.Int64(r.heartbeat_ms);
  w.EndObject();
  return TextOf(buf);
}

std::string ToJson(const ClaimReply& r) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  w.Key("leases");
  w.StartArray();
  for (const auto& l : r.leases) WriteLease(w, l);
  w.EndArray();
  w.EndObject();
  return TextOf(buf);
}

std::string ToJson(const LeaseExtension& r) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  w.Key("lease_expires_at");
  WriteString(w, FormatWireTime(r.expires_at_ms));
  w.Key("lease_ttl_ms");
  w.Int64(r.ttl_ms);
  w.EndObject();
  return TextOf(buf);
}

std::string CompleteJson() { return R"({"outcome":"completed"})"; }

std::string ToJson(const FailReply& r) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  w.Key("outcome");
  w.String("failed");
  w.Key("requeued");
  w.Bool(r.requeued);
  if (r.requeued && r.not_before_ms) {
    w.Key("next_attempt_not_before");
    WriteString(w, FormatWireTime(*r.not_before_ms));
  }
  w.EndObject();
  return TextOf(buf);
}

std::string ToJson(const ArtifactRef& r) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  WriteArtifactFields(w, r);
  w.EndObject();
  return TextOf(buf);
}

std::string ToJson(const RunStatusReply& r) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  w.Key("run_id");
  WriteString(w, r.run_id);
  w.Key("status");
  WriteString(w, Name(r.status));
  w.EndObject();
  return TextOf(buf);
}

std::string ToJson(const RunView& r) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  w.Key("run_id");
  WriteString(w, r.run_id);
  w.Key("workflow");
  WriteString(w, r.workflow);
  w.Key("version");
  WriteString(w, r.version);
  w.Key("status");
  WriteString(w, Name(r.status));
  w.Key("input");
  WriteRaw(w, r.input_json);
  w.Key("state");
  WriteRaw(w, r.state_json);
  w.Key("correlation");
  WriteRaw(w, r.correlation_json);
  w.Key("created_at");
  WriteString(w, FormatWireTime(r.created_at));
  w.Key("finished_at");
  WriteTime(w, r.finished_at);
  w.Key("deadline_at");
  WriteTime(w, r.deadline_at);
  w.Key("steps");
  w.StartArray();
  for (const auto& s : r.steps) {
    w.StartObject();
    w.Key("step_id");
    WriteString(w, s.step_id);
    w.Key("status");
    WriteString(w, s.status);
    w.Key("attempts");
    w.StartArray();
    for (const auto& a : s.attempts) WriteAttempt(w, a);
    w.EndArray();
    w.Key("output");
    WriteRaw(w, s.output_json.value_or(""));
    w.Key("artifacts");
    w.StartArray();
    for (const auto& a : s.artifacts) {
      w.StartObject();
      WriteArtifactFields(w, a);
      w.EndObject();
    }
    w.EndArray();
    w.Key("unfittable");
    if (s.unfittable) {
      w.StartObject();
      w.Key("reason");
      WriteString(w, s.unfittable->reason);
      w.Key("workers");
      w.Int64(s.unfittable->workers);
      w.EndObject();
    } else {
      w.Null();
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return TextOf(buf);
}

std::string ToJson(const JournalView& r) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  w.Key("run_id");
  WriteString(w, r.run_id);
  w.Key("events");
  w.StartArray();
  for (const auto& e : r.events) {
    w.StartObject();
    w.Key("seq");
    w.Int64(e.seq);
    w.Key("at");
    WriteString(w, FormatWireTime(e.at));
    w.Key("type");
    WriteString(w, e.type);
    w.Key("step_id");
    WriteOptString(w, e.step_id);
    w.Key("attempt");
    if (e.attempt) {
      w.Int64(*e.attempt);
    } else {
      w.Null();
    }
    w.Key("worker_id");
    WriteOptString(w, e.worker_id);
    w.Key("detail");
    WriteRaw(w, e.detail_json);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return TextOf(buf);
}

std::string ToJson(const ApiError& e) {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  w.Key("error");
  WriteString(w, e.error);
  if (!e.field.empty() || e.error == "bad_request") {
    w.Key("field");
    WriteString(w, e.field);
  }
  if (!e.reason.empty()) {
    w.Key("reason");
    WriteString(w, e.reason);
  }
  if (!e.outcome.empty()) {
    w.Key("outcome");
    WriteString(w, e.outcome);
  }
  w.Key("message");
  WriteString(w, e.message);
  w.EndObject();
  return TextOf(buf);
}

}  // namespace scimesh::coordinator

// The replies and the error body as wire JSON: each reply becomes protocol/'s
// wire type (wire.h) and is written by protocol/'s serializer, the same code
// the client's parsers are tested against (one wire model). Only what the
// coordinator holds differently is converted here: times (ms since the epoch
// → RFC 3339) and state enums (→ their one spelling).
#include "coordinator/responses.h"

#include "coordinator/wire_time.h"
#include "protocol/util/json_io.h"
#include "protocol/wire/wire_json.h"

namespace scimesh::coordinator {
namespace {

std::optional<std::string> OptTime(const std::optional<int64_t>& ms) {
  if (!ms) return std::nullopt;
  return FormatWireTime(*ms);
}

scimesh::Lease WireLease(const Lease& l) {
  scimesh::Lease w;
  w.lease_id = l.lease_id;
  w.run_id = l.run_id;
  w.step_id = l.step_id;
  w.workflow = l.workflow;
  w.version = l.version;
  w.attempt = l.attempt;
  w.input_json = l.input_json;
  w.previous_json = l.previous_json;
  w.run_state_json = l.run_state_json;
  w.correlation_json = l.correlation_json;
  w.idempotency_key = l.idempotency_key;
  w.trace_id = l.trace_id;
  w.span_id = l.span_id;
  w.delivery = l.delivery;
  w.resources = l.resources;
  w.walltime_s = l.walltime_s;
  for (const auto& a : l.input_artifacts) {
    w.input_artifacts.push_back(
        scimesh::InputArtifact{a.step_id, a.ref.name, a.ref.uri, a.ref.sha256, a.ref.size, a.ref.media_type});
  }
  w.artifact_quota = l.artifact_quota;
  w.lease_token = l.lease_token;
  w.lease_ttl_ms = l.lease_ttl_ms;
  w.heartbeat_ms = l.heartbeat_ms;
  w.lease_expires_at = FormatWireTime(l.expires_at_ms);
  return w;
}

// {"class": ..., "message": ...} or null.
std::string ErrorJson(const AttemptView& a) {
  if (!a.error_class) return "null";
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  w.StartObject();
  WriteString(w, "class", *a.error_class);
  WriteString(w, "message", a.error_message.value_or(""));
  w.EndObject();
  return JsonText(buf);
}

scimesh::AttemptView WireAttempt(const AttemptView& a) {
  scimesh::AttemptView w;
  w.attempt = a.attempt;
  w.lease_id = a.lease_id;
  w.worker_id = a.worker_id;
  w.status = std::string(Name(a.status));
  w.claimed_at = FormatWireTime(a.claimed_at);
  w.started_at = OptTime(a.started_at);
  w.ended_at = OptTime(a.ended_at);
  w.error_json = ErrorJson(a);
  w.progress_json = a.progress_json.value_or("null");
  w.usage_json = a.usage_json.value_or("null");
  return w;
}

}  // namespace

std::string ToJson(const RegisterReply& r) {
  return SerializeRegisterResponse(RegisterResponse{r.worker_id, r.lease_ttl_ms, r.heartbeat_ms});
}

std::string ToJson(const ClaimReply& r) {
  ClaimResponse w;
  for (const auto& l : r.leases) w.leases.push_back(WireLease(l));
  return SerializeClaimResponse(w);
}

std::string ToJson(const LeaseExtension& r) {
  return SerializeExtendResponse(ExtendResponse{FormatWireTime(r.expires_at_ms), r.ttl_ms});
}

std::string CompleteJson() { return SerializeCompleteResponse(CompleteResponse{"completed"}); }

std::string ToJson(const FailReply& r) {
  FailResponse w{"failed", r.requeued, std::nullopt};
  if (r.requeued && r.not_before_ms) w.next_attempt_not_before = FormatWireTime(*r.not_before_ms);
  return SerializeFailResponse(w);
}

std::string ToJson(const ArtifactRef& r) { return SerializeArtifactRef(r); }

std::string ToJson(const RunStatusReply& r) {
  return SerializeRunStatus(RunStatus{r.run_id, std::string(Name(r.status))});
}

std::string ToJson(const RunView& r) {
  scimesh::RunView w;
  w.run_id = r.run_id;
  w.workflow = r.workflow;
  w.version = r.version;
  w.status = std::string(Name(r.status));
  w.input_json = r.input_json;
  w.state_json = r.state_json;
  w.correlation_json = r.correlation_json;
  w.created_at = FormatWireTime(r.created_at);
  w.finished_at = OptTime(r.finished_at);
  w.deadline_at = OptTime(r.deadline_at);
  for (const auto& s : r.steps) {
    scimesh::StepView ws;
    ws.step_id = s.step_id;
    ws.status = s.status;
    for (const auto& a : s.attempts) ws.attempts.push_back(WireAttempt(a));
    ws.output_json = s.output_json.value_or("null");
    ws.artifacts = s.artifacts;
    if (s.unfittable) ws.unfittable = scimesh::UnfittableView{s.unfittable->reason, s.unfittable->workers};
    w.steps.push_back(std::move(ws));
  }
  return SerializeRunView(w);
}

std::string ToJson(const JournalView& r) {
  Journal w;
  w.run_id = r.run_id;
  for (const auto& e : r.events) {
    w.events.push_back(scimesh::JournalEvent{e.seq, FormatWireTime(e.at), e.type, e.step_id, e.attempt,
                                             e.worker_id, e.detail_json});
  }
  return SerializeJournal(w);
}

std::string ToJson(const ApiError& e) {
  ErrorBody w;
  w.error = e.error;
  // A 400 always names its field (possibly "" for the body as a whole).
  if (!e.field.empty() || e.error == "bad_request") w.field = e.field;
  w.message = e.message;
  if (!e.reason.empty()) w.reason = e.reason;
  if (!e.outcome.empty()) w.outcome = e.outcome;
  return SerializeErrorBody(w);
}

}  // namespace scimesh::coordinator

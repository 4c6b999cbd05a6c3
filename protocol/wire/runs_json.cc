// JSON for the run API (scope execute): start, show, journal, cancel.
#include "protocol/util/json_io.h"
#include "protocol/wire/identifiers.h"
#include "protocol/wire/wire_json.h"
#include "protocol/wire/wire_json_parts.h"
#include "protocol/wire/wire_limits.h"

namespace scimesh {
namespace {

Result<AttemptView> AttemptFrom(const JsonObject& o) {
  AttemptView a;
  SCIMESH_ASSIGN_OR_RETURN(a.attempt, o.Int("attempt"));
  SCIMESH_ASSIGN_OR_RETURN(a.lease_id, o.String("lease_id"));
  SCIMESH_ASSIGN_OR_RETURN(a.worker_id, o.String("worker_id"));
  SCIMESH_ASSIGN_OR_RETURN(a.host, o.OptString("host"));  // absent from older coordinators: unknown
  SCIMESH_ASSIGN_OR_RETURN(a.status, o.String("status"));
  SCIMESH_ASSIGN_OR_RETURN(a.claimed_at, o.OptString("claimed_at"));
  SCIMESH_ASSIGN_OR_RETURN(a.started_at, o.OptString("started_at"));
  SCIMESH_ASSIGN_OR_RETURN(a.ended_at, o.OptString("ended_at"));
  a.error_json = o.OptRaw("error").value_or("null");
  // Absent from coordinators older than these fields: null, as for none.
  a.progress_json = o.OptRaw("progress").value_or("null");
  a.usage_json = o.OptRaw("usage").value_or("null");
  return a;
}

void WriteAttempt(JsonWriter& w, const AttemptView& a) {
  w.StartObject();
  WriteInt(w, "attempt", a.attempt);
  WriteString(w, "lease_id", a.lease_id);
  WriteString(w, "worker_id", a.worker_id);
  WriteOptString(w, "host", a.host);
  WriteString(w, "status", a.status);
  WriteOptString(w, "claimed_at", a.claimed_at);
  WriteOptString(w, "started_at", a.started_at);
  WriteOptString(w, "ended_at", a.ended_at);
  WriteRaw(w, "error", a.error_json);
  WriteRaw(w, "progress", a.progress_json);
  WriteRaw(w, "usage", a.usage_json);
  w.EndObject();
}

Result<StepView> StepFrom(const JsonObject& o) {
  StepView s;
  SCIMESH_ASSIGN_OR_RETURN(s.step_id, o.String("step_id"));
  SCIMESH_ASSIGN_OR_RETURN(s.status, o.String("status"));
  SCIMESH_RETURN_IF_ERROR(o.Objects("attempts", SIZE_MAX, &s.attempts, AttemptFrom));
  s.output_json = o.OptRaw("output").value_or("null");
  if (o.Has("artifacts")) SCIMESH_RETURN_IF_ERROR(o.Objects("artifacts", SIZE_MAX, &s.artifacts, ArtifactRefFrom));
  SCIMESH_ASSIGN_OR_RETURN(s.unfittable, UnfittableFrom(o));
  s.error_json = o.OptRaw("error").value_or("null");
  return s;
}

void WriteStep(JsonWriter& w, const StepView& s) {
  w.StartObject();
  WriteString(w, "step_id", s.step_id);
  WriteString(w, "status", s.status);
  WriteArray(w, "attempts", s.attempts, WriteAttempt);
  WriteRaw(w, "output", s.output_json);
  WriteArray(w, "artifacts", s.artifacts, WriteArtifactRef);
  WriteUnfittable(w, s.unfittable);
  WriteRaw(w, "error", s.error_json);
  w.EndObject();
}

Result<JournalEvent> EventFrom(const JsonObject& o) {
  JournalEvent e;
  SCIMESH_ASSIGN_OR_RETURN(e.seq, o.Int("seq"));
  SCIMESH_ASSIGN_OR_RETURN(e.at, o.String("at"));
  SCIMESH_ASSIGN_OR_RETURN(e.type, o.String("type"));
  SCIMESH_ASSIGN_OR_RETURN(e.step_id, o.OptString("step_id"));
  SCIMESH_ASSIGN_OR_RETURN(e.attempt, o.OptInt("attempt"));
  SCIMESH_ASSIGN_OR_RETURN(e.worker_id, o.OptString("worker_id"));
  e.detail_json = o.OptRaw("detail").value_or("{}");
  return e;
}

void WriteEvent(JsonWriter& w, const JournalEvent& e) {
  w.StartObject();
  WriteInt(w, "seq", e.seq);
  WriteString(w, "at", e.at);
  WriteString(w, "type", e.type);
  WriteOptString(w, "step_id", e.step_id);
  WriteOptInt(w, "attempt", e.attempt);
  WriteOptString(w, "worker_id", e.worker_id);
  WriteRaw(w, "detail", e.detail_json);
  w.EndObject();
}

}  // namespace

Result<std::optional<UnfittableView>> UnfittableFrom(const JsonObject& o) {
  if (!o.Has("unfittable")) return std::optional<UnfittableView>();
  SCIMESH_ASSIGN_OR_RETURN(JsonObject u, o.Object("unfittable"));
  UnfittableView v;
  SCIMESH_ASSIGN_OR_RETURN(v.reason, u.String("reason"));
  SCIMESH_ASSIGN_OR_RETURN(v.workers, u.Int("workers"));
  return std::optional<UnfittableView>(std::move(v));
}

void WriteUnfittable(JsonWriter& w, const std::optional<UnfittableView>& u) {
  if (!u) {
    w.Key("unfittable");
    w.Null();
    return;
  }
  WriteObject(w, "unfittable", [&](JsonWriter& o) {
    WriteString(o, "reason", u->reason);
    WriteInt(o, "workers", u->workers);
  });
}

std::string SerializeRunCreateRequest(const RunCreateRequest& r) {
  return ObjectText([&](JsonWriter& w) {
    WriteString(w, "workflow", r.workflow);
    if (r.version) WriteString(w, "version", *r.version);
    WriteRaw(w, "input", r.input_json);
    if (r.correlation_json) WriteRaw(w, "correlation", *r.correlation_json);
    if (r.deadline_s) WriteInt(w, "deadline_s", *r.deadline_s);
  });
}

Result<RunCreateRequest> ParseRunCreateRequest(std::string_view json, const JsonLimits& limits) {
  return ReadObjectText(json, "run request", limits, [](const JsonObject& o) -> Result<RunCreateRequest> {
    RunCreateRequest r;
    SCIMESH_ASSIGN_OR_RETURN(r.workflow, IdentifierFrom(o, "workflow"));
    SCIMESH_ASSIGN_OR_RETURN(r.version, o.OptString("version"));
    if (r.version) SCIMESH_RETURN_IF_ERROR(CheckIdentifier(*r.version, o.FieldPath("version")));
    SCIMESH_ASSIGN_OR_RETURN(r.input_json, o.RawObject("input"));
    if (o.Has("correlation")) r.correlation_json = o.OptRaw("correlation");
    SCIMESH_ASSIGN_OR_RETURN(r.deadline_s, o.OptIntIn("deadline_s", 1, kMaxRunDeadlineS));
    return r;
  });
}

std::string SerializeRunStatus(const RunStatus& r) {
  return ObjectText([&](JsonWriter& w) {
    WriteString(w, "run_id", r.run_id);
    WriteString(w, "status", r.status);
  });
}

Result<RunStatus> ParseRunStatus(std::string_view json) {
  return ReadObjectText(json, "run status", {}, [](const JsonObject& o) -> Result<RunStatus> {
    RunStatus r;
    SCIMESH_ASSIGN_OR_RETURN(r.run_id, o.String("run_id"));
    SCIMESH_ASSIGN_OR_RETURN(r.status, o.String("status"));
    return r;
  });
}

std::string SerializeRunView(const RunView& r) {
  return ObjectText([&](JsonWriter& w) {
    WriteString(w, "run_id", r.run_id);
    WriteString(w, "workflow", r.workflow);
    WriteString(w, "version", r.version);
    WriteString(w, "status", r.status);
    WriteRaw(w, "input", r.input_json);
    WriteRaw(w, "state", r.state_json);
    WriteRaw(w, "correlation", r.correlation_json);
    WriteString(w, "created_at", r.created_at);
    WriteOptString(w, "finished_at", r.finished_at);
    WriteOptString(w, "deadline_at", r.deadline_at);
    WriteOptString(w, "reason", r.reason);
    WriteArray(w, "steps", r.steps, WriteStep);
  });
}

Result<RunView> ParseRunView(std::string_view json) {
  return ReadObjectText(json, "run", {}, [](const JsonObject& o) -> Result<RunView> {
    RunView r;
    SCIMESH_ASSIGN_OR_RETURN(r.run_id, o.String("run_id"));
    SCIMESH_ASSIGN_OR_RETURN(r.workflow, o.String("workflow"));
    SCIMESH_ASSIGN_OR_RETURN(r.version, o.String("version"));
    SCIMESH_ASSIGN_OR_RETURN(r.status, o.String("status"));
    SCIMESH_ASSIGN_OR_RETURN(r.input_json, o.Raw("input"));
    SCIMESH_ASSIGN_OR_RETURN(r.state_json, o.Raw("state"));
    r.correlation_json = o.OptRaw("correlation").value_or("null");
    SCIMESH_ASSIGN_OR_RETURN(r.created_at, o.String("created_at"));
    SCIMESH_ASSIGN_OR_RETURN(r.finished_at, o.OptString("finished_at"));
    SCIMESH_ASSIGN_OR_RETURN(r.deadline_at, o.OptString("deadline_at"));
    SCIMESH_ASSIGN_OR_RETURN(r.reason, o.OptString("reason"));
    SCIMESH_RETURN_IF_ERROR(o.Objects("steps", SIZE_MAX, &r.steps, StepFrom));
    return r;
  });
}

std::string SerializeJournal(const Journal& j) {
  return ObjectText([&](JsonWriter& w) {
    WriteString(w, "run_id", j.run_id);
    WriteArray(w, "events", j.events, WriteEvent);
  });
}

Result<Journal> ParseJournal(std::string_view json) {
  return ReadObjectText(json, "journal", {}, [](const JsonObject& o) -> Result<Journal> {
    Journal j;
    SCIMESH_ASSIGN_OR_RETURN(j.run_id, o.String("run_id"));
    SCIMESH_RETURN_IF_ERROR(o.Objects("events", SIZE_MAX, &j.events, EventFrom));
    return j;
  });
}

}  // namespace scimesh

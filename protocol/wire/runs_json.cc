// JSON for the run API (scope execute): start, show, journal, cancel.
#include "protocol/util/json_members.h"
#include "protocol/wire/identifiers.h"
#include "protocol/wire/wire_json.h"
#include "protocol/wire/wire_json_parts.h"
#include "protocol/wire/wire_limits.h"

namespace scimesh {
namespace {

constexpr auto kAttemptMembers = [](auto& m, auto& a) {
  m.Int("attempt", a.attempt);
  m.String("lease_id", a.lease_id);
  m.String("worker_id", a.worker_id);
  m.OptString("host", a.host);  // absent from older coordinators: unknown
  m.String("status", a.status);
  m.OptString("claimed_at", a.claimed_at);
  m.OptString("started_at", a.started_at);
  m.OptString("ended_at", a.ended_at);
  // Absent from coordinators older than progress and usage: null, as for none.
  m.RawOr("error", a.error_json, "null");
  m.RawOr("progress", a.progress_json, "null");
  m.RawOr("usage", a.usage_json, "null");
};

constexpr auto kStepMembers = [](auto& m, auto& s) {
  m.String("step_id", s.step_id);
  m.String("status", s.status);
  m.Objects("attempts", s.attempts, kAttemptMembers);
  m.RawOr("output", s.output_json, "null");
  m.OptObjects("artifacts", s.artifacts, kArtifactMembers);
  m.OptObject("unfittable", s.unfittable, kUnfittableMembers);
  m.RawOr("error", s.error_json, "null");
};

constexpr auto kEventMembers = [](auto& m, auto& e) {
  m.Int("seq", e.seq);
  m.String("at", e.at);
  m.String("type", e.type);
  m.OptString("step_id", e.step_id);
  m.OptInt("attempt", e.attempt);
  m.OptString("worker_id", e.worker_id);
  m.RawOr("detail", e.detail_json, "{}");
};

constexpr auto kRunCreateMembers = [](auto& m, auto& r) {
  m.String("workflow", r.workflow, CheckIdentifier);
  m.OptString("version", r.version, Unset::kOmit, CheckIdentifier);
  m.RawObject("input", r.input_json);
  m.OptRaw("correlation", r.correlation_json);
  m.OptIntIn("deadline_s", r.deadline_s, 1, kMaxRunDeadlineS, Unset::kOmit);
};

constexpr auto kRunStatusMembers = [](auto& m, auto& r) {
  m.String("run_id", r.run_id);
  m.String("status", r.status);
};

constexpr auto kRunMembers = [](auto& m, auto& r) {
  kRunHeadMembers(m, r);
  m.Raw("input", r.input_json);
  m.Raw("state", r.state_json);
  m.RawOr("correlation", r.correlation_json, "null");
  m.String("created_at", r.created_at);
  m.OptString("finished_at", r.finished_at);
  m.OptString("deadline_at", r.deadline_at);
  m.OptString("reason", r.reason);
  m.Objects("steps", r.steps, kStepMembers);
};

constexpr auto kJournalMembers = [](auto& m, auto& j) {
  m.String("run_id", j.run_id);
  m.Objects("events", j.events, kEventMembers);
};

}  // namespace

std::string SerializeRunCreateRequest(const RunCreateRequest& r) { return MembersText(r, kRunCreateMembers); }

Result<RunCreateRequest> ParseRunCreateRequest(std::string_view json, const JsonLimits& limits) {
  return ParseMembers<RunCreateRequest>(json, "run request", limits, kRunCreateMembers);
}

std::string SerializeRunStatus(const RunStatus& r) { return MembersText(r, kRunStatusMembers); }

Result<RunStatus> ParseRunStatus(std::string_view json) {
  return ParseMembers<RunStatus>(json, "run status", {}, kRunStatusMembers);
}

std::string SerializeRunView(const RunView& r) { return MembersText(r, kRunMembers); }

Result<RunView> ParseRunView(std::string_view json) { return ParseMembers<RunView>(json, "run", {}, kRunMembers); }

std::string SerializeJournal(const Journal& j) { return MembersText(j, kJournalMembers); }

Result<Journal> ParseJournal(std::string_view json) {
  return ParseMembers<Journal>(json, "journal", {}, kJournalMembers);
}

}  // namespace scimesh

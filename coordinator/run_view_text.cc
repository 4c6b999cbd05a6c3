// Text of a run, of the run list and of watch's lines for `scimesh-coordinator run`.
#include "coordinator/run_view_text.h"

#include <rapidjson/document.h>

#include "protocol/util/json_io.h"

namespace scimesh::coordinator {
namespace {

std::string OrDash(const std::optional<std::string>& s) { return s ? *s : "-"; }

// "class: message" of an error JSON ({"class", "message"}), or "" for null.
std::string ErrorText(const std::string& error_json) {
  auto parsed = scimesh::ParseJson(error_json, "error");
  if (!parsed.ok() || !parsed->IsObject()) return "";
  const rapidjson::Document& error = *parsed;
  auto text = [&](const char* name) -> std::string {
    auto it = error.FindMember(name);
    return it != error.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
  };
  return text("class") + ": " + text("message");
}

// "    #N  STATUS (class: message)  dir HOST:<spool>/RUN/STEP/N  progress P  usage U"
void PrintAttempt(const std::string& run_id, const std::string& step_id, const AttemptView& a, std::ostream& out) {
  out << "    #" << a.attempt << "  " << a.status;
  const std::string error = ErrorText(a.error_json);
  if (!error.empty()) out << " (" << error << ")";
  out << "  dir " << (a.host ? *a.host + ":" : "") << AttemptDirText(run_id, step_id, a.attempt);
  if (a.progress_json != "null") out << "  progress " << a.progress_json;
  if (a.usage_json != "null") out << "  usage " << a.usage_json;
  out << "\n";
}

}  // namespace

std::string AttemptDirText(const std::string& run_id, const std::string& step_id, int64_t attempt) {
  return "<spool>/" + run_id + "/" + step_id + "/" + std::to_string(attempt);
}

void PrintRunView(const RunView& run, std::ostream& out) {
  out << "run " << run.run_id << "  " << run.workflow << "@" << run.version << "  " << run.status;
  if (run.reason) out << ": " << *run.reason;
  out << "\n  created " << run.created_at << "  deadline " << OrDash(run.deadline_at) << "  finished "
      << OrDash(run.finished_at) << "\n";
  for (const auto& s : run.steps) {
    out << "  step " << s.step_id << "  " << s.status;
    const std::string error = ErrorText(s.error_json);
    if (!error.empty()) out << " (" << error << ")";
    if (!s.attempts.empty()) {
      const AttemptView& last = s.attempts.back();
      out << "  attempts " << s.attempts.size() << "  last #" << last.attempt << " by " << last.worker_id << " "
          << last.status;
    }
    if (s.unfittable) out << "  no worker can fit: " << s.unfittable->reason;  // docs/protocol.md "Unfittable steps"
    out << "\n";
    for (const auto& a : s.attempts) PrintAttempt(run.run_id, s.step_id, a, out);
  }
}

void PrintRunList(const RunList& list, std::ostream& out) {
  for (const RunSummary& r : list.runs) {
    out << r.run_id << "  " << r.workflow << "@" << r.version << "  " << r.status << "  created " << r.created_at;
    if (r.finished_at) out << "  finished " << *r.finished_at;
    if (r.correlation_json != "null") out << "  correlation " << r.correlation_json;
    out << "\n";
  }
}

void PrintJournalEvent(const JournalEvent& e, std::ostream& out) {
  out << e.at << "  " << e.type;
  if (e.step_id) out << "  step " << *e.step_id << " #" << (e.attempt ? std::to_string(*e.attempt) : "-");
  if (e.worker_id) out << "  worker " << *e.worker_id;
  if (!e.detail_json.empty() && e.detail_json != "{}") out << "  " << e.detail_json;
  out << std::endl;
}

void PrintProgress(const std::string& at, const std::string& step_id, int64_t attempt,
                   const std::string& progress_json, std::ostream& out) {
  out << at << "  progress  step " << step_id << " #" << attempt << "  " << progress_json << std::endl;
}

void PrintUnfittable(const std::string& at, const std::string& step_id, const std::string& reason,
                     std::ostream& out) {
  out << at << "  unfittable  step " << step_id << " #-  no worker can fit: " << reason << std::endl;
}

std::string_view RunEndOf(const JournalEvent& e) {
  for (std::string_view end : {"completed", "failed", "timed_out", "cancelled"}) {
    if (e.type.size() == end.size() + 4 && e.type.rfind("run_", 0) == 0 && e.type.compare(4, end.size(), end) == 0) {
      return end;
    }
  }
  return "";
}

}  // namespace scimesh::coordinator

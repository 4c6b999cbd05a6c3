// Text of a run and of journal events for `scimesh-coordinator run`.
#include "coordinator/run_view_text.h"

#include <rapidjson/document.h>

#include "protocol/util/json_io.h"

namespace scimesh::coordinator {
namespace {

std::string OrDash(const std::optional<std::string>& s) { return s ? *s : "-"; }

// " (class: message)" of an attempt's error JSON, or "".
std::string ErrorText(const std::string& error_json) {
  auto parsed = scimesh::ParseJson(error_json, "attempt error");
  if (!parsed.ok() || !parsed->IsObject()) return "";
  const rapidjson::Document& error = *parsed;
  auto text = [&](const char* name) -> std::string {
    auto it = error.FindMember(name);
    return it != error.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
  };
  return " (" + text("class") + ": " + text("message") + ")";
}

}  // namespace

void PrintRunView(const RunView& run, std::ostream& out) {
  out << "run " << run.run_id << "  " << run.workflow << "@" << run.version << "  " << run.status << "\n";
  out << "  created " << run.created_at << "  deadline " << OrDash(run.deadline_at) << "  finished "
      << OrDash(run.finished_at) << "\n";
  for (const auto& s : run.steps) {
    out << "  step " << s.step_id << "  " << s.status;
    if (!s.attempts.empty()) {
      const AttemptView& last = s.attempts.back();
      out << "  attempts " << s.attempts.size() << "  last #" << last.attempt << " by " << last.worker_id << " "
          << last.status << ErrorText(last.error_json);
    }
    if (s.unfittable) out << "  no worker can fit: " << s.unfittable->reason;  // docs/protocol.md "Unfittable steps"
    out << "\n";
    // What each attempt reported: its last heartbeated progress, the usage it completed with.
    for (const auto& a : s.attempts) {
      const bool has_progress = a.progress_json != "null", has_usage = a.usage_json != "null";
      if (!has_progress && !has_usage) continue;
      out << "    #" << a.attempt;
      if (has_progress) out << "  progress " << a.progress_json;
      if (has_usage) out << "  usage " << a.usage_json;
      out << "\n";
    }
  }
}

void PrintJournalEvent(const JournalEvent& e, std::ostream& out) {
  out << e.at << "  " << e.type;
  if (e.step_id) out << "  step " << *e.step_id << " #" << (e.attempt ? std::to_string(*e.attempt) : "-");
  if (e.worker_id) out << "  worker " << *e.worker_id;
  if (!e.detail_json.empty() && e.detail_json != "{}") out << "  " << e.detail_json;
  out << std::endl;
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

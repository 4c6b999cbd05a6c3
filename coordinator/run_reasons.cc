// Why a run and its steps ended: reasons from step_failed events and needs.
#include "coordinator/run_reasons.h"

#include <map>
#include <set>

#include "coordinator/ledger_internal.h"

namespace scimesh::coordinator {
namespace {

constexpr char kSelectStepFailures[] =
    "SELECT step_id, detail FROM journal WHERE run_id = ?1 AND type = 'step_failed' ORDER BY seq";

// A string member of a stored detail, or "".
std::string MemberOf(const rapidjson::Document& detail, const char* name) {
  if (!detail.IsObject()) return "";
  auto it = detail.FindMember(name);
  return it != detail.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
}

// The first step among `step_id`'s needs (directly or through other steps)
// whose status is `failed`, or "".
std::string FailedNeed(const WorkflowDefinition& def, const std::string& step_id,
                       const std::map<std::string, std::string, std::less<>>& status) {
  std::vector<std::string> todo{step_id};
  std::set<std::string, std::less<>> seen{step_id};
  while (!todo.empty()) {
    const StepDefinition* step = def.FindStep(todo.back());
    todo.pop_back();
    if (step == nullptr) continue;
    for (const std::string& need : step->needs) {
      auto it = status.find(need);
      if (it != status.end() && it->second == "failed") return need;
      if (seen.insert(need).second) todo.push_back(need);
    }
  }
  return "";
}

// Why a step that the run's end stopped did not complete ("the run was
// cancelled"), given the run's status and the step that failed it.
std::string RunEndCause(const RunView& run, const std::string& failed_step) {
  if (run.status == "failed") return "the run failed (step " + failed_step + " failed)";
  if (run.status == "timed_out") return "the run timed out";
  return "the run was cancelled";
}

}  // namespace

Result<std::vector<StepFailure>> ReadStepFailures(Database& db, std::string_view run_id) {
  std::vector<StepFailure> out;
  SCIMESH_RETURN_IF_ERROR(db.ForEachRow(kSelectStepFailures, {run_id}, [&](const Row& r) {
    StepFailure f{r.Text(0), "", ""};
    auto detail = ParseJson(r.Text(1));
    if (detail.ok()) {
      f.error_class = MemberOf(**detail, "class");
      f.message = MemberOf(**detail, "message");
    }
    out.push_back(std::move(f));
  }));
  return out;
}

void ExplainRunEnd(const std::vector<StepFailure>& failures, const WorkflowDefinition* def, RunView& run) {
  const StepFailure* first = failures.empty() ? nullptr : &failures.front();
  const std::string failed_step = first != nullptr ? first->step_id : "?";
  if (run.status == "failed") {
    run.reason = first != nullptr ? "step " + first->step_id + " failed: " + first->error_class + ": " + first->message
                                  : std::string("a step failed");
  } else if (run.status == "timed_out") {
    run.reason = "its deadline passed (" + run.deadline_at.value_or("?") + ")";
  } else if (run.status == "cancelled") {
    run.reason = "cancelled through the run API";
  }
  std::map<std::string, std::string, std::less<>> status;
  for (const StepView& s : run.steps) status[s.step_id] = s.status;
  for (StepView& s : run.steps) {
    if (s.status == "failed") {
      const StepFailure* mine = nullptr;
      for (const StepFailure& f : failures) {
        if (f.step_id == s.step_id) mine = &f;
      }
      s.error_json = mine != nullptr ? ErrorJson(mine->error_class, mine->message)
                                     : (s.attempts.empty() ? "null" : s.attempts.back().error_json);
    } else if (s.status == "cancelled") {
      const std::string need = def != nullptr && run.status == "failed" ? FailedNeed(*def, s.step_id, status) : "";
      const std::string message = !need.empty() ? "never ran: it needs step " + need + ", which failed"
                                  : (s.attempts.empty() ? "never ran: " : "stopped: ") + RunEndCause(run, failed_step);
      s.error_json = ErrorJson("cancelled", message);
    }
  }
}

}  // namespace scimesh::coordinator

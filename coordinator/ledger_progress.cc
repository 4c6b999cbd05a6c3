// Ledger: how steps and runs move once an attempt ends — requeue, failure for
// good, promotion of waiting steps (rendering their input), run completion.
#include <map>

#include "coordinator/input_template.h"
#include "coordinator/json_text.h"
#include "coordinator/ledger_internal.h"

namespace scimesh::coordinator {
namespace {

constexpr char kRequeueStep[] =
    "UPDATE steps SET status = 'queued', not_before = ?3 WHERE run_id = ?1 AND step_id = ?2";
constexpr char kFailStep[] = "UPDATE steps SET status = 'failed' WHERE run_id = ?1 AND step_id = ?2";
constexpr char kFinishRun[] =
    "UPDATE runs SET status = ?2, finished_at = ?3 WHERE run_id = ?1 AND status = 'running' RETURNING run_id";
constexpr char kCancelOpenSteps[] =
    "UPDATE steps SET status = 'cancelled' WHERE run_id = ?1 "
    "AND status IN ('waiting', 'queued', 'leased', 'running', 'orphaned')";
constexpr char kCancelOpenAttempts[] =
    "UPDATE attempts SET status = 'cancelled', prev_status = NULL, ended_at = ?2 WHERE run_id = ?1 "
    "AND status IN ('leased', 'running', 'orphaned')";
constexpr char kSelectRunForPromotion[] =
    "SELECT workflow, version, input, state, status FROM runs WHERE run_id = ?1";
constexpr char kSelectWaiting[] = "SELECT step_id FROM steps WHERE run_id = ?1 AND status = 'waiting' ORDER BY ord";
constexpr char kSelectStepState[] = "SELECT status, output FROM steps WHERE run_id = ?1 AND step_id = ?2";
constexpr char kAnyUnfinished[] = "SELECT 1 FROM steps WHERE run_id = ?1 AND status != 'completed' LIMIT 1";
constexpr char kQueueStep[] =
    "UPDATE steps SET status = 'queued', input = ?3, not_before = 0 WHERE run_id = ?1 AND step_id = ?2";

struct StepState {
  std::string status;
  std::optional<std::string> output;
};

}  // namespace

Status Ledger::RequeueStep(Tx& tx, const AttemptRow& cause, int64_t delay_ms, std::string_view reason) {
  const int64_t not_before = tx.now + delay_ms;
  auto q = db_->Sql(kRequeueStep);
  if (!q.ok()) return q.status();
  q->Bind(1, cause.run_id).Bind(2, cause.step_id).Bind(3, not_before);
  SCIMESH_RETURN_IF_ERROR(q->Run());
  SCIMESH_RETURN_IF_ERROR(AppendEvent(tx, cause.run_id, "step_requeued", cause.step_id, cause.attempt,
                                      cause.worker_id,
                                      DetailJson({{"reason", std::string(reason)},
                                                  {"not_before", FormatWireTime(not_before)}})));
  if (delay_ms <= 0) {
    tx.work_available = true;
  } else {
    tx.Due(not_before);
  }
  tx.Log("step requeued: run={} step={} after attempt={} worker_id={} reason={} delay_ms={}", cause.run_id,
         cause.step_id, cause.attempt, cause.worker_id, reason, delay_ms);
  return Status::Ok();
}

Status Ledger::FailStepForGood(Tx& tx, const std::string& run_id, const std::string& step_id,
                               std::optional<int64_t> attempt, const std::optional<std::string>& worker_id,
                               std::string_view error_class, std::string_view message) {
  auto q = db_->Sql(kFailStep);
  if (!q.ok()) return q.status();
  q->Bind(1, run_id).Bind(2, step_id);
  SCIMESH_RETURN_IF_ERROR(q->Run());
  SCIMESH_RETURN_IF_ERROR(AppendEvent(
      tx, run_id, "step_failed", step_id, attempt, worker_id,
      DetailJson({{"class", std::string(error_class)}, {"message", std::string(message)}})));
  tx.Log("step failed for good: run={} step={} class={}", run_id, step_id, error_class);
  return FinishRun(tx, run_id, RunState::kFailed);
}

Status Ledger::FinishRun(Tx& tx, const std::string& run_id, RunState state) {
  {
    auto q = db_->Sql(kFinishRun);
    if (!q.ok()) return q.status();
    q->Bind(1, run_id).Bind(2, Name(state)).Bind(3, tx.now);
    auto changed = q->Step();
    if (!changed.ok()) return changed.status();
    if (!*changed) return Status::Ok();  // already terminal
    SCIMESH_RETURN_IF_ERROR(q->Run());
  }
  {
    auto q = db_->Sql(kCancelOpenSteps);
    if (!q.ok()) return q.status();
    q->Bind(1, run_id);
    SCIMESH_RETURN_IF_ERROR(q->Run());
  }
  {
    auto q = db_->Sql(kCancelOpenAttempts);
    if (!q.ok()) return q.status();
    q->Bind(1, run_id).Bind(2, tx.now);
    SCIMESH_RETURN_IF_ERROR(q->Run());
  }
  SCIMESH_RETURN_IF_ERROR(
      AppendEvent(tx, run_id, "run_" + std::string(Name(state)), std::nullopt, std::nullopt, std::nullopt, "{}"));
  tx.work_available = true;  // long polls restricted to this run may return
  tx.Log("run {}: {}", Name(state), run_id);
  return Status::Ok();
}

Status Ledger::PromoteWaiting(Tx& tx, const std::string& run_id, bool journal_runnable) {
  std::string workflow, version, input_text, state_text;
  {
    auto q = db_->Sql(kSelectRunForPromotion);
    if (!q.ok()) return q.status();
    q->Bind(1, run_id);
    auto has = q->Step();
    if (!has.ok()) return has.status();
    if (!*has || q->Text(4) != "running") return Status::Ok();
    workflow = q->Text(0);
    version = q->Text(1);
    input_text = q->Text(2);
    state_text = q->Text(3);
  }
  auto def = Definition(workflow, version);
  if (!def.ok()) return def.status();
  if (!*def) return Status::Internal("run " + run_id + " names an unknown definition");

  std::vector<std::string> waiting;
  {
    auto q = db_->Sql(kSelectWaiting);
    if (!q.ok()) return q.status();
    q->Bind(1, run_id);
    for (;;) {
      auto has = q->Step();
      if (!has.ok()) return has.status();
      if (!*has) break;
      waiting.push_back(q->Text(0));
    }
  }
  // The state of a need (read once per call).
  std::map<std::string, StepState, std::less<>> states;
  auto state_of = [&](const std::string& step_id) -> Result<const StepState*> {
    auto it = states.find(step_id);
    if (it != states.end()) return &it->second;
    auto q = db_->Sql(kSelectStepState);
    if (!q.ok()) return q.status();
    q->Bind(1, run_id).Bind(2, step_id);
    auto has = q->Step();
    if (!has.ok()) return has.status();
    StepState st{*has ? q->Text(0) : "", *has ? q->OptText(1) : std::nullopt};
    return &states.emplace(step_id, std::move(st)).first->second;
  };

  std::unique_ptr<rapidjson::Document> input_doc, state_doc;
  std::map<std::string, std::unique_ptr<rapidjson::Document>, std::less<>> outputs;
  for (const std::string& waiting_id : waiting) {
    const StepDefinition* found = (*def)->FindStep(waiting_id);
    if (found == nullptr) return Status::Internal("run " + run_id + " has an unknown step " + waiting_id);
    const StepDefinition& step = *found;
    bool ready = true;
    for (const auto& need : step.needs) {
      auto st = state_of(need);
      if (!st.ok()) return st.status();
      ready = ready && (*st)->status == "completed";
    }
    if (!ready) continue;

    if (!input_doc) {
      auto in = ParseJson(input_text);
      auto st = ParseJson(state_text);
      if (!in.ok() || !st.ok()) return Status::Internal("run " + run_id + ": stored input or state is not JSON");
      input_doc = std::move(in).value();
      state_doc = std::move(st).value();
    }
    TemplateScope scope;
    scope.input = input_doc.get();
    scope.state = state_doc.get();
    scope.run_id = run_id;
    for (const auto& need : step.needs) {
      auto it = outputs.find(need);
      if (it == outputs.end()) {
        auto out = ParseJson(states[need].output.value_or("{}"));  // read by state_of above
        if (!out.ok()) return Status::Internal("run " + run_id + ": stored output is not JSON");
        it = outputs.emplace(need, std::move(out).value()).first;
      }
      scope.outputs[need] = it->second.get();
    }
    auto rendered = RenderTemplate(step.input_template, scope);
    if (!rendered.ok()) {
      if (rendered.status().code() != Code::kNotFound) return rendered.status();
      return FailStepForGood(tx, run_id, step.id, std::nullopt, std::nullopt, Name(FailClass::kFatal),
                             rendered.status().message());
    }
    auto q = db_->Sql(kQueueStep);
    if (!q.ok()) return q.status();
    q->Bind(1, run_id).Bind(2, step.id).Bind(3, *rendered);
    SCIMESH_RETURN_IF_ERROR(q->Run());
    if (journal_runnable) {
      SCIMESH_RETURN_IF_ERROR(AppendEvent(tx, run_id, "step_runnable", step.id, std::nullopt, std::nullopt, "{}"));
      tx.Log("step runnable: run={} step={}", run_id, step.id);
    }
    tx.work_available = true;
  }

  auto q = db_->Sql(kAnyUnfinished);
  if (!q.ok()) return q.status();
  q->Bind(1, run_id);
  auto unfinished = q->Step();
  if (!unfinished.ok()) return unfinished.status();
  if (*unfinished) return Status::Ok();
  return FinishRun(tx, run_id, RunState::kCompleted);
}

}  // namespace scimesh::coordinator

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

// What promoting the waiting steps of one run reads: the run's input and
// state (parsed once), and the status and output of the steps they need
// (each read and parsed once per call).
class PromotionScope {
 public:
  PromotionScope(Database& db, std::string run_id, std::string input_text, std::string state_text);
  // Whether every need of `step` completed.
  Result<bool> NeedsCompleted(const StepDefinition& step);
  // What `step`'s input template may refer to (its needs completed).
  Result<TemplateScope> For(const StepDefinition& step);

 private:
  Result<const StepState*> StateOf(const std::string& step_id);

  Database& db_;
  const std::string run_id_;
  const std::string input_text_;
  const std::string state_text_;
  std::map<std::string, StepState, std::less<>> states_;
  std::unique_ptr<rapidjson::Document> input_doc_, state_doc_;
  std::map<std::string, std::unique_ptr<rapidjson::Document>, std::less<>> outputs_;
};

}  // namespace

Status Ledger::RequeueStep(Tx& tx, const AttemptRow& cause, int64_t delay_ms, std::string_view reason) {
  const int64_t not_before = tx.now + delay_ms;
  SCIMESH_RETURN_IF_ERROR(db_->Run(kRequeueStep, {cause.run_id, cause.step_id, not_before}));
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
  SCIMESH_RETURN_IF_ERROR(db_->Run(kFailStep, {run_id, step_id}));
  SCIMESH_RETURN_IF_ERROR(AppendEvent(
      tx, run_id, "step_failed", step_id, attempt, worker_id,
      DetailJson({{"class", std::string(error_class)}, {"message", std::string(message)}})));
  tx.Log("step failed for good: run={} step={} class={}", run_id, step_id, error_class);
  return FinishRun(tx, run_id, RunState::kFailed);
}

Status Ledger::FinishRun(Tx& tx, const std::string& run_id, RunState state) {
  SCIMESH_ASSIGN_OR_RETURN(bool changed, db_->Exists(kFinishRun, {run_id, Name(state), tx.now}));
  if (!changed) return Status::Ok();  // already terminal
  SCIMESH_RETURN_IF_ERROR(db_->Run(kCancelOpenSteps, {run_id}));
  SCIMESH_RETURN_IF_ERROR(db_->Run(kCancelOpenAttempts, {run_id, tx.now}));
  SCIMESH_RETURN_IF_ERROR(
      AppendEvent(tx, run_id, "run_" + std::string(Name(state)), std::nullopt, std::nullopt, std::nullopt, "{}"));
  tx.work_available = true;  // long polls restricted to this run may return
  tx.Log("run {}: {}", Name(state), run_id);
  return Status::Ok();
}

namespace {

PromotionScope::PromotionScope(Database& db, std::string run_id, std::string input_text, std::string state_text)
    : db_(db), run_id_(std::move(run_id)), input_text_(std::move(input_text)), state_text_(std::move(state_text)) {}

Result<const StepState*> PromotionScope::StateOf(const std::string& step_id) {
  auto it = states_.find(step_id);
  if (it != states_.end()) return &it->second;
  StepState st;
  auto read = [&](const Row& r) { st = StepState{r.Text(0), r.OptText(1)}; };
  SCIMESH_RETURN_IF_ERROR(db_.FirstRow(kSelectStepState, {run_id_, step_id}, read).status());
  return &states_.emplace(step_id, std::move(st)).first->second;
}

Result<bool> PromotionScope::NeedsCompleted(const StepDefinition& step) {
  bool ready = true;
  for (const auto& need : step.needs) {
    SCIMESH_ASSIGN_OR_RETURN(const StepState* st, StateOf(need));
    ready = ready && st->status == "completed";
  }
  return ready;
}

Result<TemplateScope> PromotionScope::For(const StepDefinition& step) {
  if (!input_doc_) {
    auto in = ParseJson(input_text_);
    auto st = ParseJson(state_text_);
    if (!in.ok() || !st.ok()) return Status::Internal("run " + run_id_ + ": stored input or state is not JSON");
    input_doc_ = std::move(in).value();
    state_doc_ = std::move(st).value();
  }
  TemplateScope scope;
  scope.input = input_doc_.get();
  scope.state = state_doc_.get();
  scope.run_id = run_id_;
  for (const auto& need : step.needs) {
    auto it = outputs_.find(need);
    if (it == outputs_.end()) {
      SCIMESH_ASSIGN_OR_RETURN(const StepState* st, StateOf(need));
      auto out = ParseJson(st->output.value_or("{}"));
      if (!out.ok()) return Status::Internal("run " + run_id_ + ": stored output is not JSON");
      it = outputs_.emplace(need, std::move(out).value()).first;
    }
    scope.outputs[need] = it->second.get();
  }
  return scope;
}

}  // namespace

Status Ledger::PromoteWaiting(Tx& tx, const std::string& run_id, bool journal_runnable) {
  std::string workflow, version, input_text, state_text, status;
  SCIMESH_ASSIGN_OR_RETURN(bool run_found, db_->FirstRow(kSelectRunForPromotion, {run_id}, [&](const Row& r) {
    workflow = r.Text(0);
    version = r.Text(1);
    input_text = r.Text(2);
    state_text = r.Text(3);
    status = r.Text(4);
  }));
  if (!run_found || status != "running") return Status::Ok();
  auto def = Definition(workflow, version);
  if (!def.ok()) return def.status();
  if (!*def) return Status::Internal("run " + run_id + " names an unknown definition");

  std::vector<std::string> waiting;
  SCIMESH_RETURN_IF_ERROR(
      db_->ForEachRow(kSelectWaiting, {run_id}, [&](const Row& r) { waiting.push_back(r.Text(0)); }));
  PromotionScope promotion(*db_, run_id, std::move(input_text), std::move(state_text));
  for (const std::string& waiting_id : waiting) {
    const StepDefinition* step = (*def)->FindStep(waiting_id);
    if (step == nullptr) return Status::Internal("run " + run_id + " has an unknown step " + waiting_id);
    SCIMESH_ASSIGN_OR_RETURN(bool ready, promotion.NeedsCompleted(*step));
    if (!ready) continue;
    SCIMESH_ASSIGN_OR_RETURN(TemplateScope scope, promotion.For(*step));
    auto rendered = RenderTemplate(step->input_template, scope);
    if (!rendered.ok()) {
      if (rendered.status().code() != Code::kNotFound) return rendered.status();
      return FailStepForGood(tx, run_id, step->id, std::nullopt, std::nullopt, Name(FailClass::kFatal),
                             rendered.status().message());
    }
    SCIMESH_RETURN_IF_ERROR(QueueStep(tx, run_id, step->id, *rendered, journal_runnable));
  }

  SCIMESH_ASSIGN_OR_RETURN(bool unfinished, db_->Exists(kAnyUnfinished, {run_id}));
  if (unfinished) return Status::Ok();
  return FinishRun(tx, run_id, RunState::kCompleted);
}

Status Ledger::QueueStep(Tx& tx, const std::string& run_id, const std::string& step_id, const std::string& input_json,
                         bool journal_runnable) {
  SCIMESH_RETURN_IF_ERROR(db_->Run(kQueueStep, {run_id, step_id, input_json}));
  if (journal_runnable) {
    SCIMESH_RETURN_IF_ERROR(AppendEvent(tx, run_id, "step_runnable", step_id, std::nullopt, std::nullopt, "{}"));
    tx.Log("step runnable: run={} step={}", run_id, step_id);
  }
  tx.work_available = true;
  return Status::Ok();
}

}  // namespace scimesh::coordinator

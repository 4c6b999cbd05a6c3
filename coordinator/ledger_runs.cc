// Ledger: the run API — start, cancel, show, journal.
#include "coordinator/id_generator.h"
#include "coordinator/ledger_internal.h"
#include "coordinator/run_reasons.h"
#include "coordinator/tenancy.h"
#include "coordinator/unfittable.h"

namespace scimesh::coordinator {
namespace {

constexpr char kNewestVersion[] = "SELECT version FROM definitions WHERE workflow = ?1 ORDER BY seq DESC LIMIT 1";
constexpr char kInsertRun[] =
    "INSERT INTO runs(run_id, workflow, version, status, input, state, correlation, trace_id, created_at, "
    "deadline_at) VALUES (?1, ?2, ?3, 'running', ?4, '{}', ?5, ?6, ?7, ?8) RETURNING seq";
constexpr char kInsertStep[] =
    "INSERT INTO steps(run_id, step_id, run_seq, ord, status, span_id) VALUES (?1, ?2, ?3, ?4, 'waiting', ?5)";
constexpr char kSetRunOwner[] = "INSERT INTO run_owners(run_id, key_name) VALUES (?1, ?2)";
constexpr char kSelectRunStatus[] = "SELECT status FROM runs WHERE run_id = ?1";
constexpr char kSelectRun[] =
    "SELECT run_id, workflow, version, status, input, state, correlation, created_at, finished_at, deadline_at "
    "FROM runs WHERE run_id = ?1";
constexpr char kSelectSteps[] = "SELECT step_id, status, output FROM steps WHERE run_id = ?1 ORDER BY ord";
// With the host its worker registered with: where the attempt's directory is.
constexpr char kSelectAttempts[] =
    "SELECT a.step_id, a.attempt, a.lease_id, a.worker_id, a.status, a.claimed_at, a.started_at, a.ended_at, "
    "a.error_class, a.error_message, a.progress, a.usage, w.host FROM attempts a "
    "LEFT JOIN workers w ON w.worker_id = a.worker_id WHERE a.run_id = ?1 ORDER BY a.step_id, a.attempt";
constexpr char kSelectArtifacts[] =
    "SELECT step_id, name, uri, sha256, size, media_type FROM step_artifacts WHERE run_id = ?1 "
    "ORDER BY step_id, ord";
constexpr char kSelectJournal[] =
    "SELECT seq, at, type, step_id, attempt, worker_id, detail FROM journal WHERE run_id = ?1 ORDER BY seq";

std::optional<std::string> OptWireTime(const std::optional<int64_t>& ms) {
  if (!ms) return std::nullopt;
  return FormatWireTime(*ms);
}


}  // namespace

ApiResult<RunStatus> Ledger::CreateRun(const RunCreateRequest& req, const KeyIdentity& key) {
  return Transact<RunStatus>([&](Tx& tx) -> ApiResult<RunStatus> {
    std::string version;
    if (req.version) {
      version = *req.version;
    } else {
      auto newest = db_->FirstText(kNewestVersion, {req.workflow});
      if (!newest.ok()) return Broken(newest.status());
      if (!*newest) return ApiError::NotFound("workflow " + req.workflow + " was never registered");
      version = **newest;
    }
    auto def = Definition(req.workflow, version);
    if (!def.ok()) return Broken(def.status());
    if (!*def) return ApiError::NotFound("workflow " + req.workflow + " version " + version + " was never registered");

    const std::string run_id = NewRunId();
    std::optional<int64_t> deadline;
    if (req.deadline_s) deadline = tx.now + *req.deadline_s * 1000;
    auto run_seq = db_->FirstInt(kInsertRun, {run_id, req.workflow, version, req.input_json,
                                              req.correlation_json.value_or("null"), NewTraceId(), tx.now, deadline});
    if (!run_seq.ok()) return Broken(run_seq.status());
    for (size_t i = 0; i < (*def)->steps.size(); ++i) {
      LEDGER_CHECK(db_->Run(kInsertStep, {run_id, (*def)->steps[i].id, run_seq->value_or(0), static_cast<int64_t>(i),
                                          NewSpanId()}));
    }
    LEDGER_CHECK(SetOwner(kSetRunOwner, run_id, key.name));
    LEDGER_CHECK(AppendEvent(tx, run_id, "run_started", std::nullopt, std::nullopt, std::nullopt, "{}"));
    tx.Log("run started: run={} key={} workflow={} version={} steps={}", run_id, key.name, req.workflow, version,
           (*def)->steps.size());
    // Steps without needs become queued now (their input rendered).
    LEDGER_CHECK(PromoteWaiting(tx, run_id, false));
    if (deadline) tx.Due(*deadline);

    auto status = db_->FirstText(kSelectRunStatus, {run_id});
    if (!status.ok()) return Broken(status.status());
    return RunStatus{run_id, status->value_or("failed")};
  });
}

ApiResult<RunStatus> Ledger::CancelRun(std::string_view run_id, const KeyIdentity& key) {
  return Transact<RunStatus>([&](Tx& tx) -> ApiResult<RunStatus> {
    if (auto mine = CheckRun(run_id, key, MayCancelRun); !mine.ok()) return mine.error();
    auto status = db_->FirstText(kSelectRunStatus, {run_id});
    if (!status.ok()) return Broken(status.status());
    if (!*status) return ApiError::NotFound("no run " + std::string(run_id));
    if (**status == Name(RunState::kRunning)) {
      LEDGER_CHECK(FinishRun(tx, std::string(run_id), RunState::kCancelled));
      return RunStatus{std::string(run_id), std::string(Name(RunState::kCancelled))};
    }
    return RunStatus{std::string(run_id), **status};
  });
}

ApiResult<RunView> Ledger::ShowRun(std::string_view run_id, const KeyIdentity& key) {
  return Transact<RunView>([&](Tx& tx) -> ApiResult<RunView> {
    if (auto mine = CheckRun(run_id, key, MayReadRun); !mine.ok()) return mine.error();
    auto run = ReadRun(run_id);
    if (!run.ok()) return run;
    auto def = Definition(run.value().workflow, run.value().version);
    if (!def.ok()) return Broken(def.status());
    if (*def) LEDGER_CHECK(MarkUnfittableSteps(*db_, **def, tx.now, run.value()));
    if (run.value().status != Name(RunState::kRunning)) {
      auto failures = ReadStepFailures(*db_, run_id);
      if (!failures.ok()) return Broken(failures.status());
      ExplainRunEnd(*failures, def->get(), run.value());
    }
    return run;
  });
}

ApiResult<RunView> Ledger::ReadRun(std::string_view run_id) {
  RunView v;
  auto found = db_->FirstRow(kSelectRun, {run_id}, [&](const Row& r) {
    v = RunView{r.Text(0), r.Text(1), r.Text(2), r.Text(3), r.Text(4), r.Text(5), r.Text(6),
                FormatWireTime(r.Int(7)), OptWireTime(r.OptInt(8)), OptWireTime(r.OptInt(9)), std::nullopt, {}};
  });
  if (!found.ok()) return Broken(found.status());
  if (!*found) return ApiError::NotFound("no run " + std::string(run_id));
  // Each step's attempts and artifacts, found by its id.
  std::map<std::string, size_t, std::less<>> index;
  auto step_of = [&](const Row& r) -> StepView* {
    auto it = index.find(r.Text(0));
    return it == index.end() ? nullptr : &v.steps[it->second];
  };
  LEDGER_CHECK(db_->ForEachRow(kSelectSteps, {run_id}, [&](const Row& r) {
    index[r.Text(0)] = v.steps.size();
    v.steps.push_back(StepView{r.Text(0), r.Text(1), {}, r.OptText(2).value_or("null"), {}, std::nullopt, "null"});
  }));
  LEDGER_CHECK(db_->ForEachRow(kSelectAttempts, {run_id}, [&](const Row& r) {
    StepView* step = step_of(r);
    if (step == nullptr) return;
    AttemptView a;
    a.attempt = r.Int(1);
    a.lease_id = r.Text(2);
    a.worker_id = r.Text(3);
    a.status = r.Text(4);
    a.claimed_at = FormatWireTime(r.Int(5));
    a.started_at = OptWireTime(r.OptInt(6));
    a.ended_at = OptWireTime(r.OptInt(7));
    a.error_json = ErrorJson(r.OptText(8), r.OptText(9));
    a.progress_json = r.OptText(10).value_or("null");
    a.usage_json = r.OptText(11).value_or("null");
    a.host = r.OptText(12);
    step->attempts.push_back(std::move(a));
  }));
  LEDGER_CHECK(db_->ForEachRow(kSelectArtifacts, {run_id}, [&](const Row& r) {
    StepView* step = step_of(r);
    if (step != nullptr) step->artifacts.push_back(ArtifactRef{r.Text(1), r.Text(2), r.Text(3), r.Int(4), r.Text(5)});
  }));
  return v;
}

ApiResult<scimesh::Journal> Ledger::Journal(std::string_view run_id, const KeyIdentity& key) {
  return Transact<scimesh::Journal>([&](Tx&) -> ApiResult<scimesh::Journal> {
    if (auto mine = CheckRun(run_id, key, MayReadRun); !mine.ok()) return mine.error();
    return ReadJournal(run_id);
  });
}

ApiResult<scimesh::Journal> Ledger::ReadJournal(std::string_view run_id) {
  auto exists = db_->Exists(kSelectRunStatus, {run_id});
  if (!exists.ok()) return Broken(exists.status());
  if (!*exists) return ApiError::NotFound("no run " + std::string(run_id));
  scimesh::Journal v;
  v.run_id = std::string(run_id);
  LEDGER_CHECK(db_->ForEachRow(kSelectJournal, {run_id}, [&](const Row& r) {
    v.events.push_back(JournalEvent{r.Int(0), FormatWireTime(r.Int(1)), r.Text(2), r.OptText(3), r.OptInt(4),
                                    r.OptText(5), r.Text(6)});
  }));
  return v;
}

}  // namespace scimesh::coordinator

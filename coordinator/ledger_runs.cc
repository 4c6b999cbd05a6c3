// Ledger: the run API — start, cancel, show, journal.
#include "coordinator/id_generator.h"
#include "coordinator/ledger_internal.h"
#include "coordinator/unfittable.h"
#include "coordinator/tenancy.h"

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
constexpr char kSelectAttempts[] =
    "SELECT step_id, attempt, lease_id, worker_id, status, claimed_at, started_at, ended_at, error_class, "
    "error_message, progress, usage FROM attempts WHERE run_id = ?1 ORDER BY step_id, attempt";
constexpr char kSelectArtifacts[] =
    "SELECT step_id, name, uri, sha256, size, media_type FROM step_artifacts WHERE run_id = ?1 "
    "ORDER BY step_id, ord";
constexpr char kSelectJournal[] =
    "SELECT seq, at, type, step_id, attempt, worker_id, detail FROM journal WHERE run_id = ?1 ORDER BY seq";

std::optional<std::string> OptWireTime(const std::optional<int64_t>& ms) {
  if (!ms) return std::nullopt;
  return FormatWireTime(*ms);
}

// An attempt's `error`: {"class": ..., "message": ...}, or null when it has none.
std::string ErrorJson(const std::optional<std::string>& error_class, const std::optional<std::string>& message) {
  if (!error_class) return "null";
  return DetailJson({{"class", *error_class}, {"message", message.value_or("")}});
}

}  // namespace

ApiResult<RunStatus> Ledger::CreateRun(const RunCreateRequest& req, const KeyIdentity& key) {
  return Transact<RunStatus>([&](Tx& tx) -> ApiResult<RunStatus> {
    std::string version;
    if (req.version) {
      version = *req.version;
    } else {
      auto q = db_->Sql(kNewestVersion);
      if (!q.ok()) return Broken(q.status());
      q->Bind(1, req.workflow);
      auto has = q->Step();
      if (!has.ok()) return Broken(has.status());
      if (!*has) return ApiError::NotFound("workflow " + req.workflow + " was never registered");
      version = q->Text(0);
    }
    auto def = Definition(req.workflow, version);
    if (!def.ok()) return Broken(def.status());
    if (!*def) return ApiError::NotFound("workflow " + req.workflow + " version " + version + " was never registered");

    const std::string run_id = NewRunId();
    std::optional<int64_t> deadline;
    if (req.deadline_s) deadline = tx.now + *req.deadline_s * 1000;
    int64_t run_seq = 0;
    {
      auto q = db_->Sql(kInsertRun);
      if (!q.ok()) return Broken(q.status());
      q->Bind(1, run_id).Bind(2, req.workflow).Bind(3, version).Bind(4, req.input_json);
      q->Bind(5, req.correlation_json.value_or("null")).Bind(6, NewTraceId()).Bind(7, tx.now).Bind(8, deadline);
      auto has = q->Step();
      if (!has.ok()) return Broken(has.status());
      run_seq = *has ? q->Int(0) : 0;
      LEDGER_CHECK(q->Run());
    }
    for (size_t i = 0; i < (*def)->steps.size(); ++i) {
      auto q = db_->Sql(kInsertStep);
      if (!q.ok()) return Broken(q.status());
      q->Bind(1, run_id).Bind(2, (*def)->steps[i].id).Bind(3, run_seq).Bind(4, static_cast<int64_t>(i));
      q->Bind(5, NewSpanId());
      LEDGER_CHECK(q->Run());
    }
    LEDGER_CHECK(SetOwner(kSetRunOwner, run_id, key.name));
    LEDGER_CHECK(AppendEvent(tx, run_id, "run_started", std::nullopt, std::nullopt, std::nullopt, "{}"));
    tx.Log("run started: run={} key={} workflow={} version={} steps={}", run_id, key.name, req.workflow, version,
           (*def)->steps.size());
    // Steps without needs become queued now (their input rendered).
    LEDGER_CHECK(PromoteWaiting(tx, run_id, false));
    if (deadline) tx.Due(*deadline);

    auto q = db_->Sql(kSelectRunStatus);
    if (!q.ok()) return Broken(q.status());
    q->Bind(1, run_id);
    auto has = q->Step();
    if (!has.ok()) return Broken(has.status());
    return RunStatus{run_id, *has ? q->Text(0) : "failed"};
  });
}

ApiResult<RunStatus> Ledger::CancelRun(std::string_view run_id, const KeyIdentity& key) {
  return Transact<RunStatus>([&](Tx& tx) -> ApiResult<RunStatus> {
    if (auto mine = CheckRun(run_id, key, MayCancelRun); !mine.ok()) return mine.error();
    std::string status;
    {
      auto q = db_->Sql(kSelectRunStatus);
      if (!q.ok()) return Broken(q.status());
      q->Bind(1, run_id);
      auto has = q->Step();
      if (!has.ok()) return Broken(has.status());
      if (!*has) return ApiError::NotFound("no run " + std::string(run_id));
      status = q->Text(0);
    }
    if (status == Name(RunState::kRunning)) {
      LEDGER_CHECK(FinishRun(tx, std::string(run_id), RunState::kCancelled));
      status = Name(RunState::kCancelled);
    }
    return RunStatus{std::string(run_id), status};
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
    return run;
  });
}

ApiResult<RunView> Ledger::ReadRun(std::string_view run_id) {
  RunView v;
  {
    auto q = db_->Sql(kSelectRun);
    if (!q.ok()) return Broken(q.status());
    q->Bind(1, run_id);
    auto has = q->Step();
    if (!has.ok()) return Broken(has.status());
    if (!*has) return ApiError::NotFound("no run " + std::string(run_id));
    v.run_id = q->Text(0);
    v.workflow = q->Text(1);
    v.version = q->Text(2);
    v.status = q->Text(3);
    v.input_json = q->Text(4);
    v.state_json = q->Text(5);
    v.correlation_json = q->Text(6);
    v.created_at = FormatWireTime(q->Int(7));
    v.finished_at = OptWireTime(q->OptInt(8));
    v.deadline_at = OptWireTime(q->OptInt(9));
  }
  std::map<std::string, size_t, std::less<>> index;
  {
    auto q = db_->Sql(kSelectSteps);
    if (!q.ok()) return Broken(q.status());
    q->Bind(1, run_id);
    for (;;) {
      auto has = q->Step();
      if (!has.ok()) return Broken(has.status());
      if (!*has) break;
      index[q->Text(0)] = v.steps.size();
      v.steps.push_back(StepView{q->Text(0), q->Text(1), {}, q->OptText(2).value_or("null"), {}, std::nullopt});
    }
  }
  {
    auto q = db_->Sql(kSelectAttempts);
    if (!q.ok()) return Broken(q.status());
    q->Bind(1, run_id);
    for (;;) {
      auto has = q->Step();
      if (!has.ok()) return Broken(has.status());
      if (!*has) break;
      auto it = index.find(q->Text(0));
      if (it == index.end()) continue;
      AttemptView a;
      a.attempt = q->Int(1);
      a.lease_id = q->Text(2);
      a.worker_id = q->Text(3);
      a.status = q->Text(4);
      a.claimed_at = FormatWireTime(q->Int(5));
      a.started_at = OptWireTime(q->OptInt(6));
      a.ended_at = OptWireTime(q->OptInt(7));
      a.error_json = ErrorJson(q->OptText(8), q->OptText(9));
      a.progress_json = q->OptText(10).value_or("null");
      a.usage_json = q->OptText(11).value_or("null");
      v.steps[it->second].attempts.push_back(std::move(a));
    }
  }
  {
    auto q = db_->Sql(kSelectArtifacts);
    if (!q.ok()) return Broken(q.status());
    q->Bind(1, run_id);
    for (;;) {
      auto has = q->Step();
      if (!has.ok()) return Broken(has.status());
      if (!*has) break;
      auto it = index.find(q->Text(0));
      if (it == index.end()) continue;
      v.steps[it->second].artifacts.push_back(ArtifactRef{q->Text(1), q->Text(2), q->Text(3), q->Int(4), q->Text(5)});
    }
  }
  return v;
}

ApiResult<scimesh::Journal> Ledger::Journal(std::string_view run_id, const KeyIdentity& key) {
  return Transact<scimesh::Journal>([&](Tx&) -> ApiResult<scimesh::Journal> {
    if (auto mine = CheckRun(run_id, key, MayReadRun); !mine.ok()) return mine.error();
    return ReadJournal(run_id);
  });
}

ApiResult<scimesh::Journal> Ledger::ReadJournal(std::string_view run_id) {
  {
    auto q = db_->Sql(kSelectRunStatus);
    if (!q.ok()) return Broken(q.status());
    q->Bind(1, run_id);
    auto has = q->Step();
    if (!has.ok()) return Broken(has.status());
    if (!*has) return ApiError::NotFound("no run " + std::string(run_id));
  }
  scimesh::Journal v;
  v.run_id = std::string(run_id);
  auto q = db_->Sql(kSelectJournal);
  if (!q.ok()) return Broken(q.status());
  q->Bind(1, run_id);
  for (;;) {
    auto has = q->Step();
    if (!has.ok()) return Broken(has.status());
    if (!*has) break;
    v.events.push_back(JournalEvent{q->Int(0), FormatWireTime(q->Int(1)), q->Text(2), q->OptText(3), q->OptInt(4),
                                    q->OptText(5), q->Text(6)});
  }
  return v;
}

}  // namespace scimesh::coordinator

// Ledger: opening the store, the definition cache, the journal and loading
// attempts. The calls themselves live in ledger_<concern>.cc.
#include "coordinator/ledger.h"

#include "coordinator/ledger_internal.h"
#include "coordinator/schema.h"
#include "protocol/util/json_io.h"

namespace scimesh::coordinator {
namespace {

constexpr char kNextEventSeq[] =
    "UPDATE runs SET last_event = last_event + 1 WHERE run_id = ?1 RETURNING last_event";
constexpr char kInsertEvent[] =
    "INSERT INTO journal(run_id, seq, at, type, step_id, attempt, worker_id, detail) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";
constexpr char kSelectAttemptByLease[] = SCIMESH_ATTEMPT_COLUMNS "WHERE a.lease_id = ?1";

}  // namespace

Ledger::Ledger(std::unique_ptr<Database> db, Options options, Signals signals)
    : db_(std::move(db)), options_(std::move(options)), signals_(std::move(signals)),
      jitter_rng_(std::random_device{}()) {}

Ledger::~Ledger() = default;

Result<std::unique_ptr<Ledger>> Ledger::Open(const std::string& db_path, Options options, Signals signals) {
  auto db = Database::Open(db_path, kSchema);
  if (!db.ok()) return db.status().WithContext("open database");
  return std::unique_ptr<Ledger>(new Ledger(std::move(db).value(), std::move(options), std::move(signals)));
}

void Ledger::Execute(Work& work) {
  std::unique_lock<std::mutex> lock(queue_mu_);
  queue_.push_back(&work);
  queue_cv_.wait(lock, [&] { return work.done || (!committing_ && queue_.front() == &work); });
  if (work.done) return;  // a leader ran it
  // The leader: everything queued so far is this batch.
  committing_ = true;
  std::vector<Work*> batch;
  batch.swap(queue_);
  lock.unlock();
  RunBatch(batch);
  lock.lock();
  committing_ = false;
  for (Work* w : batch) w->done = true;
  lock.unlock();
  queue_cv_.notify_all();
}

void Ledger::RunBatch(const std::vector<Work*>& batch) {
  static constexpr char kSavepoint[] = "SAVEPOINT call";
  static constexpr char kRelease[] = "RELEASE call";
  static constexpr char kUndo[] = "ROLLBACK TO call";
  Status begun = db_->Begin();
  if (!begun.ok()) {
    for (Work* w : batch) w->failure = begun;
    return;
  }
  for (Work* w : batch) {
    Status s = db_->Run(kSavepoint);
    if (!s.ok()) {
      w->failure = s;
      continue;
    }
    w->tx.now = options_.clock->NowMs();
    try {
      w->kept = w->run(w->tx);
    } catch (const std::exception& e) {
      // A call must never take the batch (and every waiting caller) down.
      spdlog::error("ledger: a call threw: {}", e.what());
      w->failure = Status::Internal("a call threw");
      w->kept = false;
    }
    if (!w->kept) s = db_->Run(kUndo);
    if (s.ok()) s = db_->Run(kRelease);
    if (!s.ok() || !w->failure.ok()) {
      if (w->failure.ok()) w->failure = s;
      w->kept = true;  // its answer cannot be trusted: report the failure
    }
  }
  Status committed = db_->Commit();
  if (!committed.ok()) {
    // Nothing of the batch is on disk: every call that changed something
    // answers with the failure. Cached definitions may name rolled-back rows.
    for (Work* w : batch) {
      if (w->kept) w->failure = committed;
    }
    definitions_.clear();
  }
}

ApiError Ledger::Broken(const Status& status) {
  spdlog::error("ledger: a call failed in storage: {}", status.ToString());
  return ApiError::FromStatus(status);
}

Result<Ledger::DefinitionPtr> Ledger::Definition(const std::string& workflow, const std::string& version) {
  auto key = std::make_pair(workflow, version);
  if (auto it = definitions_.find(key); it != definitions_.end()) return it->second;
  std::string canonical;
  SCIMESH_ASSIGN_OR_RETURN(bool found, db_->FirstRow(kSelectDefinition, {workflow, version},
                                                     [&](const Row& r) { canonical = r.Text(0); }));
  if (!found) return DefinitionPtr();
  auto def = DefinitionFromCanonicalText(canonical);
  if (!def.ok()) return def.status();
  auto ptr = std::make_shared<const WorkflowDefinition>(std::move(def).value());
  definitions_.emplace(std::move(key), ptr);
  return ptr;
}

Status Ledger::AppendEvent(Tx& tx, const std::string& run_id, std::string_view type,
                           const std::optional<std::string>& step_id, std::optional<int64_t> attempt,
                           const std::optional<std::string>& worker_id, const std::string& detail_json) {
  int64_t seq = 0;
  SCIMESH_ASSIGN_OR_RETURN(bool found, db_->FirstRow(kNextEventSeq, {run_id}, [&](const Row& r) { seq = r.Int(0); }));
  if (!found) return Status::Internal("journal: no run " + run_id);
  return db_->Run(kInsertEvent, {run_id, seq, tx.now, type, step_id, attempt, worker_id, detail_json});
}

std::string WithReport(std::string_view detail_json, const std::optional<std::string>& progress_json,
                       const std::optional<std::string>& usage_json) {
  if (!progress_json && !usage_json) return std::string(detail_json);
  auto detail = scimesh::ParseJson(detail_json, "journal detail");
  return ObjectText([&](JsonWriter& w) {
    if (detail.ok() && detail->IsObject()) {
      for (const auto& m : detail->GetObject()) {
        w.Key(m.name.GetString(), m.name.GetStringLength());
        m.value.Accept(w);
      }
    }
    // Both were checked JSON when they were stored (heartbeat, complete).
    if (progress_json) WriteRaw(w, "progress", *progress_json);
    if (usage_json) WriteRaw(w, "usage", *usage_json);
  });
}

// Reads the SCIMESH_ATTEMPT_COLUMNS of a row.
static void ReadAttemptRow(const Row& q, auto& row) {
  row.lease_id = q.Text(0);
  row.run_id = q.Text(1);
  row.step_id = q.Text(2);
  row.attempt = q.Int(3);
  row.worker_id = q.Text(4);
  row.key_name = q.Text(5);
  row.status = ParseAttemptState(q.Text(6)).value_or(AttemptState::kCancelled);
  row.prev_status = ParseAttemptState(q.OptText(7).value_or("leased")).value_or(AttemptState::kLeased);
  row.started_at = q.OptInt(8);
  row.expires_at = q.Int(9);
  row.workflow = q.Text(10);
  row.version = q.Text(11);
  row.run_status = ParseRunState(q.Text(12)).value_or(RunState::kCancelled);
  row.run_deadline = q.OptInt(13);
  row.step_attempts = q.Int(14);
  row.step_spent = q.Int(15);
  row.progress_json = q.OptText(16);
}

Result<std::optional<Ledger::AttemptRow>> Ledger::LoadAttempt(std::string_view lease_id) {
  AttemptRow row;
  auto read = [&](const Row& r) { ReadAttemptRow(r, row); };
  SCIMESH_ASSIGN_OR_RETURN(bool found, db_->FirstRow(kSelectAttemptByLease, {lease_id}, read));
  if (!found) return std::optional<AttemptRow>();
  return std::optional<AttemptRow>(std::move(row));
}

Result<std::vector<Ledger::AttemptRow>> Ledger::LoadAttempts(const char* sql, int64_t bound) {
  std::vector<AttemptRow> rows;
  SCIMESH_RETURN_IF_ERROR(db_->ForEachRow(sql, {bound}, [&](const Row& r) { ReadAttemptRow(r, rows.emplace_back()); }));
  return rows;
}

}  // namespace scimesh::coordinator

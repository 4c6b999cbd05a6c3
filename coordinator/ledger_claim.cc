// Ledger: registering workers and their definitions, and claiming — offering
// runnable steps (oldest run first, then step order, packed into `free`) and
// creating one attempt with a new lease for each.
#include "coordinator/capacity.h"
#include "coordinator/id_generator.h"
#include "coordinator/ledger_internal.h"
#include "coordinator/unfittable.h"

namespace scimesh::coordinator {
namespace {

constexpr char kInsertDefinition[] =
    "INSERT INTO definitions(workflow, version, canonical, registered_at) VALUES (?1, ?2, ?3, ?4)";
constexpr char kUpsertWorker[] =
    "INSERT INTO workers(worker_id, host, version, concurrency, registered_at) VALUES (?1, ?2, ?3, ?4, ?5) "
    "ON CONFLICT(worker_id) DO UPDATE SET host = ?2, version = ?3, concurrency = ?4, registered_at = ?5";
constexpr char kClearWorkerDefinitions[] = "DELETE FROM worker_definitions WHERE worker_id = ?1";
constexpr char kInsertWorkerDefinition[] =
    "INSERT OR IGNORE INTO worker_definitions(worker_id, workflow, version) VALUES (?1, ?2, ?3)";
constexpr char kClearUnservable[] = "DELETE FROM unservable WHERE worker_id = ?1";
constexpr char kWorkerExists[] = "SELECT 1 FROM workers WHERE worker_id = ?1";
constexpr char kSelectOfferable[] =
    "SELECT s.run_id, s.step_id, r.workflow, r.version "
    // The ordering index, always: with another one SQLite sorts every queued step.
    "FROM steps s INDEXED BY steps_offerable JOIN runs r ON r.run_id = s.run_id "
    "WHERE s.status = 'queued' AND s.not_before <= ?1 AND r.status = 'running' "
    "AND (r.deadline_at IS NULL OR r.deadline_at > ?1) AND (?2 IS NULL OR s.run_id = ?2) "
    "AND EXISTS (SELECT 1 FROM worker_definitions wd WHERE wd.worker_id = ?3 "
    "            AND wd.workflow = r.workflow AND wd.version = r.version) "
    "AND NOT EXISTS (SELECT 1 FROM unservable u WHERE u.worker_id = ?3 AND u.workflow = r.workflow "
    "                AND u.version = r.version AND u.step_id = s.step_id) "
    "ORDER BY s.run_seq, s.ord LIMIT ?4";
constexpr char kSelectRunForLease[] = "SELECT state, correlation, trace_id FROM runs WHERE run_id = ?1";
constexpr char kSelectStepForLease[] =
    "SELECT input, span_id, attempts FROM steps WHERE run_id = ?1 AND step_id = ?2";
constexpr char kSelectOutput[] = "SELECT output FROM steps WHERE run_id = ?1 AND step_id = ?2";
constexpr char kSelectStepArtifacts[] =
    "SELECT name, uri, sha256, size, media_type FROM step_artifacts WHERE run_id = ?1 AND step_id = ?2 "
    "ORDER BY ord";
constexpr char kInsertAttempt[] =
    "INSERT INTO attempts(lease_id, run_id, step_id, attempt, worker_id, key_name, status, claimed_at, "
    "expires_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'leased', ?7, ?8)";
constexpr char kLeaseStep[] =
    "UPDATE steps SET status = 'leased', attempts = ?3 WHERE run_id = ?1 AND step_id = ?2";

// How many queued steps a claim with `free` looks at before giving up on
// packing more (without `free`, exactly `max`).
constexpr int64_t kPackingScan = 1024;

struct Candidate {
  std::string run_id;
  std::string step_id;
  std::string workflow;
  std::string version;
};

}  // namespace

ApiResult<RegisterResponse> Ledger::Register(const Registration& reg, const KeyIdentity& key) {
  const RegisterRequest& req = reg.request;
  return Transact<RegisterResponse>([&](Tx& tx) -> ApiResult<RegisterResponse> {
    if (auto mine = CheckWorker(tx, req.worker_id, key); !mine.ok()) return mine.error();
    if (auto mine = CheckWorkflows(tx, reg, key); !mine.ok()) return mine.error();
    for (size_t i = 0; i < reg.definitions.size(); ++i) {
      const WorkflowDefinition& def = reg.definitions[i];
      const std::string canonical = def.CanonicalText();
      auto stored = db_->FirstText(kSelectDefinition, {def.workflow, def.version});
      if (!stored.ok()) return Broken(stored.status());
      if (*stored) {
        if (**stored != canonical) {
          return ApiError::BadRequest("definitions[" + std::to_string(i) + "]",
                                      "already registered with a different definition; bump the version");
        }
        continue;
      }
      LEDGER_CHECK(db_->Run(kInsertDefinition, {def.workflow, def.version, canonical, tx.now}));
      tx.Log("definition registered: workflow={} version={} steps={} by worker_id={}", def.workflow, def.version,
             def.steps.size(), req.worker_id);
    }
    LEDGER_CHECK(db_->Run(kUpsertWorker, {req.worker_id, req.host, req.version, req.concurrency, tx.now}));
    LEDGER_CHECK(db_->Run(kClearWorkerDefinitions, {req.worker_id}));
    LEDGER_CHECK(db_->Run(kClearUnservable, {req.worker_id}));
    for (const WorkflowDefinition& def : reg.definitions) {
      LEDGER_CHECK(db_->Run(kInsertWorkerDefinition, {req.worker_id, def.workflow, def.version}));
    }
    tx.Log("worker registered: worker_id={} key={} host={} version={} definitions={}", req.worker_id, key.name,
           req.host, req.version, reg.definitions.size());
    tx.work_available = true;  // its definitions may match queued steps
    return RegisterResponse{req.worker_id, options_.lease_ttl_ms, options_.heartbeat_ms};
  });
}

ApiResult<ClaimResponse> Ledger::Claim(const ClaimRequest& req, const KeyIdentity& key) {
  const std::string& key_name = key.name;
  return Transact<ClaimResponse>([&](Tx& tx) -> ApiResult<ClaimResponse> {
    auto registered = db_->Exists(kWorkerExists, {req.worker_id});
    if (!registered.ok()) return Broken(registered.status());
    if (!*registered) return ApiError::BadRequest("worker_id", "is not registered; register before claiming");
    if (auto mine = CheckWorker(tx, req.worker_id, key); !mine.ok()) return mine.error();
    LEDGER_CHECK(RecordClaimOffer(*db_, req.worker_id, req.free ? &*req.free : nullptr, tx.now));
    std::vector<Candidate> candidates;
    const int64_t scan = req.free ? kPackingScan : req.max;
    LEDGER_CHECK(db_->ForEachRow(kSelectOfferable, {tx.now, req.run_id, req.worker_id, scan}, [&](const Row& r) {
      candidates.push_back({r.Text(0), r.Text(1), r.Text(2), r.Text(3)});
    }));
    std::optional<FreeCapacity> free = req.free;
    ClaimResponse reply;
    for (const Candidate& c : candidates) {
      if (static_cast<int64_t>(reply.leases.size()) >= req.max) break;
      auto def = Definition(c.workflow, c.version);
      if (!def.ok()) return Broken(def.status());
      const StepDefinition* step = *def ? (*def)->FindStep(c.step_id) : nullptr;
      if (step == nullptr) continue;
      if (free && !TakeCapacity(*free, step->resources, step->walltime_s)) continue;
      auto lease = CreateLease(tx, c.run_id, *step, **def, req.worker_id, key_name);
      if (!lease.ok()) return Broken(lease.status());
      reply.leases.push_back(std::move(lease).value());
    }
    if (!reply.leases.empty()) tx.Due(tx.now + options_.lease_ttl_ms);
    return reply;
  });
}

Result<Lease> Ledger::CreateLease(Tx& tx, const std::string& run_id, const StepDefinition& step,
                                  const WorkflowDefinition& def, const std::string& worker_id,
                                  const std::string& key_name) {
  Lease l;
  l.lease_id = NewLeaseId();
  l.run_id = run_id;
  l.step_id = step.id;
  l.workflow = def.workflow;
  l.version = def.version;
  l.idempotency_key = run_id + "/" + step.id;
  l.delivery = step.delivery;
  l.resources = step.resources;
  l.walltime_s = step.walltime_s;
  l.artifact_quota = options_.artifact_quota;
  l.lease_ttl_ms = options_.lease_ttl_ms;
  l.heartbeat_ms = options_.heartbeat_ms;
  const int64_t expires_at = tx.now + options_.lease_ttl_ms;
  l.lease_expires_at = FormatWireTime(expires_at);
  SCIMESH_ASSIGN_OR_RETURN(bool run_found, db_->FirstRow(kSelectRunForLease, {run_id}, [&](const Row& r) {
    l.run_state_json = r.Text(0);
    l.correlation_json = r.Text(1);
    l.trace_id = r.Text(2);
  }));
  if (!run_found) return Status::Internal("claim: no run " + run_id);
  SCIMESH_ASSIGN_OR_RETURN(bool step_found, db_->FirstRow(kSelectStepForLease, {run_id, step.id}, [&](const Row& r) {
    l.input_json = r.OptText(0).value_or("{}");
    l.span_id = r.Text(1);
    l.attempt = r.Int(2) + 1;
  }));
  if (!step_found) return Status::Internal("claim: no step " + step.id + " in run " + run_id);
  // previous: the outputs of the needs, by step id; input_artifacts: theirs.
  rapidjson::StringBuffer prev;
  JsonWriter w(prev);
  w.StartObject();
  for (const std::string& need : step.needs) {
    std::string output = "null";
    SCIMESH_RETURN_IF_ERROR(
        db_->FirstRow(kSelectOutput, {run_id, need}, [&](const Row& r) { output = r.OptText(0).value_or("null"); })
            .status());
    WriteString(w, need);
    WriteRawJson(w, output);
    SCIMESH_RETURN_IF_ERROR(db_->ForEachRow(kSelectStepArtifacts, {run_id, need}, [&](const Row& r) {
      l.input_artifacts.push_back(InputArtifact{need, r.Text(0), r.Text(1), r.Text(2), r.Int(3), r.Text(4)});
    }));
  }
  w.EndObject();
  l.previous_json.assign(prev.GetString(), prev.GetSize());

  SCIMESH_RETURN_IF_ERROR(
      db_->Run(kInsertAttempt, {l.lease_id, run_id, step.id, l.attempt, worker_id, key_name, tx.now, expires_at}));
  SCIMESH_RETURN_IF_ERROR(db_->Run(kLeaseStep, {run_id, step.id, l.attempt}));
  SCIMESH_RETURN_IF_ERROR(AppendEvent(tx, run_id, "attempt_leased", step.id, l.attempt, worker_id,
                                      DetailJson({{"lease_id", l.lease_id}})));
  tx.Log("attempt leased: run={} step={} attempt={} lease={} worker_id={}", run_id, step.id, l.attempt, l.lease_id,
         worker_id);
  return l;
}

}  // namespace scimesh::coordinator

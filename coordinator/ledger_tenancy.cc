// Ledger: tenancy — who owns a worker_id, a workflow and a run, checked and
// recorded inside the calls' transactions (rules: coordinator/tenancy.h).
#include "coordinator/ledger_internal.h"
#include "coordinator/tenancy.h"

namespace scimesh::coordinator {
namespace {

constexpr char kWorkerOwner[] = "SELECT key_name FROM worker_owners WHERE worker_id = ?1";
constexpr char kSetWorkerOwner[] = "INSERT OR IGNORE INTO worker_owners(worker_id, key_name) VALUES (?1, ?2)";
constexpr char kWorkflowOwner[] = "SELECT key_name FROM workflow_owners WHERE workflow = ?1";
constexpr char kSetWorkflowOwner[] = "INSERT OR IGNORE INTO workflow_owners(workflow, key_name) VALUES (?1, ?2)";
constexpr char kRunningWorkflows[] =
    "SELECT DISTINCT r.workflow, o.key_name FROM runs r LEFT JOIN workflow_owners o ON o.workflow = r.workflow "
    "WHERE r.status = 'running' ORDER BY r.workflow";
constexpr char kRunOwner[] =
    "SELECT o.key_name FROM runs r LEFT JOIN run_owners o ON o.run_id = r.run_id WHERE r.run_id = ?1";

}  // namespace

Result<std::optional<std::string>> Ledger::OwnerOf(const char* sql, std::string_view id) {
  std::optional<std::string> owner;
  SCIMESH_RETURN_IF_ERROR(db_->FirstRow(sql, {id}, [&](const Row& r) { owner = r.OptText(0); }).status());
  return owner;
}

Status Ledger::SetOwner(const char* sql, std::string_view id, const std::string& key_name) {
  return db_->Run(sql, {id, key_name});
}

ApiResult<Done> Ledger::CheckWorker(Tx& tx, const std::string& worker_id, const KeyIdentity& key) {
  auto owner = OwnerOf(kWorkerOwner, worker_id);
  if (!owner.ok()) return Broken(owner.status());
  if (!MayActAsWorker(key, *owner)) {
    tx.Log("refused: key {} acted as worker_id={}, which belongs to another key", key.name, worker_id);
    return ApiError::NotOwner("worker_id " + worker_id + " belongs to another key");
  }
  if (!*owner) LEDGER_CHECK(SetOwner(kSetWorkerOwner, worker_id, key.name));
  return Done{};
}

ApiResult<Done> Ledger::CheckWorkflows(Tx&, const Registration& reg, const KeyIdentity& key) {
  for (const WorkflowDefinition& def : reg.definitions) {
    auto owner = OwnerOf(kWorkflowOwner, def.workflow);
    if (!owner.ok()) return Broken(owner.status());
    if (!MayRegisterWorkflow(key, def.workflow, *owner)) {
      return ApiError::NotOwner("workflow " + def.workflow +
                                (*owner ? " belongs to another key" : " is not among this key's workflows"));
    }
    if (!*owner) LEDGER_CHECK(SetOwner(kSetWorkflowOwner, def.workflow, key.name));
  }
  return Done{};
}

ApiResult<Done> Ledger::CheckRun(std::string_view run_id, const KeyIdentity& key,
                                 bool (*may)(const KeyIdentity&, const std::optional<std::string>&)) {
  std::optional<std::string> owner;
  auto found = db_->FirstRow(kRunOwner, {run_id}, [&](const Row& r) { owner = r.OptText(0); });
  if (!found.ok()) return Broken(found.status());
  if (!*found) return ApiError::NotFound("no run " + std::string(run_id));
  if (!may(key, owner)) return ApiError::NotOwner("run " + std::string(run_id) + " belongs to another key");
  return Done{};
}

ApiResult<std::vector<std::string>> Ledger::DemandWorkflows(const std::vector<std::string>& named,
                                                           const KeyIdentity& key) {
  for (const std::string& workflow : named) {
    auto owner = OwnerOf(kWorkflowOwner, workflow);
    if (!owner.ok()) return Broken(owner.status());
    if (!MayRegisterWorkflow(key, workflow, *owner)) {
      return ApiError::NotOwner("workflow " + workflow +
                                (*owner ? " belongs to another key" : " is not among this key's workflows"));
    }
  }
  if (!named.empty()) return named;
  std::vector<std::string> visible;
  LEDGER_CHECK(db_->ForEachRow(kRunningWorkflows, {}, [&](const Row& r) {
    if (MayRegisterWorkflow(key, r.Text(0), r.OptText(1))) visible.push_back(r.Text(0));
  }));
  return visible;
}

}  // namespace scimesh::coordinator

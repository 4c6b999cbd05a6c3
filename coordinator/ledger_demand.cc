// Ledger: the demand — the queued work of the running runs per step of each
// (workflow, version) a key serves, and what the live workers could take of
// it (docs/protocol.md "demand"). Read-only; bounded to kMaxDemandGroups.
#include <map>

#include "coordinator/capacity.h"
#include "coordinator/ledger_internal.h"
#include "coordinator/unfittable.h"

namespace scimesh::coordinator {
namespace {

// ?1 workflow, ?2 now, ?3 how many groups at most. A run past its deadline
// counts as over, as for claim; versions in the order registered, steps in
// the definition's order.
constexpr char kDemandOfWorkflow[] =
    "SELECT r.version, s.step_id, SUM(s.status = 'queued' AND s.not_before <= ?2), "
    "SUM(s.status = 'queued' AND s.not_before > ?2), SUM(s.status = 'waiting'), "
    "SUM(s.status IN ('leased', 'running', 'orphaned')) "
    "FROM runs r JOIN steps s ON s.run_id = r.run_id "
    "JOIN definitions d ON d.workflow = r.workflow AND d.version = r.version "
    "WHERE r.status = 'running' AND r.workflow = ?1 AND (r.deadline_at IS NULL OR r.deadline_at > ?2) "
    "AND s.status IN ('waiting', 'queued', 'leased', 'running', 'orphaned') "
    "GROUP BY r.version, s.step_id ORDER BY MIN(d.seq), MIN(s.ord) LIMIT ?3";

// Of `runnable` copies of `step`, how many the live workers' largest offers
// hold at once; nullopt when one of them is of unknown size.
std::optional<int64_t> Claimable(const StepDefinition& step, const LiveOffers& live, int64_t runnable) {
  if (!live.known) return std::nullopt;
  int64_t n = 0;
  for (const FreeCapacity& offer : live.offers) {
    n += CopiesThatFit(offer, step.resources, step.walltime_s, runnable - n);
  }
  return n;
}

}  // namespace

ApiResult<QueuedDemand> Ledger::Demand(const DemandQuery& query, const KeyIdentity& key) {
  return Transact<QueuedDemand>([&](Tx& tx) -> ApiResult<QueuedDemand> {
    auto workflows = DemandWorkflows(query.workflows, key);
    if (!workflows.ok()) return workflows.error();
    QueuedDemand demand;
    demand.at = FormatWireTime(tx.now);
    for (const std::string& workflow : workflows.value()) {
      if (demand.groups.size() > kMaxDemandGroups) break;
      LEDGER_CHECK(AddDemandOf(tx.now, workflow, kMaxDemandGroups - demand.groups.size(), demand));
    }
    // One group past the bound says there are more.
    if (demand.groups.size() > kMaxDemandGroups) {
      demand.groups.resize(kMaxDemandGroups);
      demand.more = true;
    }
    return demand;
  });
}

Status Ledger::AddDemandOf(int64_t now, const std::string& workflow, size_t room, QueuedDemand& out) {
  struct Counts {
    std::string version, step_id;
    int64_t runnable, backing_off, waiting, running;
  };
  std::vector<Counts> rows;
  SCIMESH_RETURN_IF_ERROR(
      db_->ForEachRow(kDemandOfWorkflow, {workflow, now, static_cast<int64_t>(room) + 1}, [&](const Row& r) {
        rows.push_back(Counts{r.Text(0), r.Text(1), r.Int(2), r.Int(3), r.Int(4), r.Int(5)});
      }));
  std::map<std::string, LiveOffers> live_by_version;
  for (const Counts& c : rows) {
    SCIMESH_ASSIGN_OR_RETURN(DefinitionPtr def, Definition(workflow, c.version));
    const StepDefinition* step = def ? def->FindStep(c.step_id) : nullptr;
    if (step == nullptr) continue;
    auto live = live_by_version.find(c.version);
    if (live == live_by_version.end()) {
      SCIMESH_ASSIGN_OR_RETURN(LiveOffers offers, ReadLiveOffers(*db_, workflow, c.version, now));
      live = live_by_version.emplace(c.version, std::move(offers)).first;
    }
    DemandGroup g;
    g.workflow = workflow;
    g.version = c.version;
    g.step_id = c.step_id;
    g.resources = step->resources;
    g.walltime_s = step->walltime_s;
    g.runnable = c.runnable;
    g.backing_off = c.backing_off;
    g.waiting = c.waiting;
    g.running = c.running;
    g.live_workers = live->second.workers;
    g.claimable_by_live_workers = Claimable(*step, live->second, c.runnable);
    g.unfittable = WhyUnfittable(*step, live->second);
    out.groups.push_back(std::move(g));
  }
  return Status::Ok();
}

}  // namespace scimesh::coordinator

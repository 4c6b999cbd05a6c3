// Each worker's largest offer, and the queued steps none of them can take.
#include "coordinator/unfittable.h"

#include <charconv>

#include "protocol/wire/offer_fit.h"

namespace scimesh::coordinator {
namespace {

// nodes: "cpus:gpus" per node, comma-separated ("4:0,4:0"); NULL until the
// worker claimed with `free` while holding nothing. aware: 0 once it claimed
// without `free` (its capacity is unknown).
constexpr char kUpsertOffer[] =
    "INSERT INTO worker_offers(worker_id, nodes, walltime_s, aware, seen_at) VALUES (?1, ?2, ?3, ?4, ?5) "
    "ON CONFLICT(worker_id) DO UPDATE SET nodes = COALESCE(?2, nodes), walltime_s = ?3, aware = ?4, seen_at = ?5 "
    // A held claim is rechecked twice a second: write only what changed, and
    // the time seen every 10 s (far inside kLiveWorkerMs).
    "WHERE seen_at < ?5 - 10000 OR aware != ?4 OR (?2 IS NOT NULL AND nodes IS NOT ?2)";
constexpr char kHoldsLease[] =
    "SELECT 1 FROM attempts WHERE worker_id = ?1 AND status IN ('leased', 'running', 'orphaned') LIMIT 1";
// The live workers holding a definition, with their offers (NULL: none known).
constexpr char kLiveOffers[] =
    "SELECT o.nodes, o.walltime_s, o.aware FROM worker_definitions wd "
    "LEFT JOIN worker_offers o ON o.worker_id = wd.worker_id "
    "WHERE wd.workflow = ?1 AND wd.version = ?2 AND (o.seen_at >= ?3 OR EXISTS (SELECT 1 FROM attempts a "
    "  WHERE a.worker_id = wd.worker_id AND a.status IN ('leased', 'running', 'orphaned')))";

std::string EncodeNodes(const FreeCapacity& free) {
  std::string out;
  for (const FreeNode& n : free.nodes) {
    if (!out.empty()) out += ',';
    out += std::to_string(n.cpus) + ":" + std::to_string(n.gpus);
  }
  return out;
}

// Nodes written by EncodeNodes; names are not kept (the reason needs counts).
std::vector<::scimesh::FreeNode> DecodeNodes(const std::string& text) {
  std::vector<::scimesh::FreeNode> out;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    ::scimesh::FreeNode n;
    auto c = std::from_chars(p, end, n.cpus);
    if (c.ec != std::errc() || c.ptr == end || *c.ptr != ':') break;
    auto g = std::from_chars(c.ptr + 1, end, n.gpus);
    if (g.ec != std::errc()) break;
    out.push_back(n);
    p = g.ptr < end ? g.ptr + 1 : end;  // past the comma
  }
  return out;
}

}  // namespace

Status RecordClaimOffer(Database& db, const std::string& worker_id, const FreeCapacity* free, int64_t now) {
  std::optional<std::string> nodes;
  if (free != nullptr) {
    SCIMESH_ASSIGN_OR_RETURN(bool holds, db.Exists(kHoldsLease, {worker_id}));
    if (!holds) nodes = EncodeNodes(*free);
  }
  return db.Run(kUpsertOffer, {worker_id, nodes, free != nullptr ? free->walltime_s : int64_t{0},
                               int64_t{free != nullptr ? 1 : 0}, now});
}

Result<LiveOffers> ReadLiveOffers(Database& db, const std::string& workflow, const std::string& version,
                                  int64_t now) {
  LiveOffers live;
  SCIMESH_RETURN_IF_ERROR(db.ForEachRow(kLiveOffers, {workflow, version, now - kLiveWorkerMs}, [&](const Row& r) {
    ++live.workers;
    auto nodes = r.OptText(0);
    if (!nodes || r.OptInt(2).value_or(0) == 0) {
      live.known = false;  // claims without `free`, or never offered while idle
      return;
    }
    live.offers.push_back(FreeCapacity{DecodeNodes(*nodes), r.Int(1)});
  }));
  return live;
}

std::optional<UnfittableView> WhyUnfittable(const StepDefinition& step, const LiveOffers& live) {
  if (!live.known || live.offers.empty()) return std::nullopt;
  auto why = WhyNoOfferFits(step.resources, step.walltime_s, live.offers);
  if (!why) return std::nullopt;
  return UnfittableView{*why, live.workers};
}

Status MarkUnfittableSteps(Database& db, const WorkflowDefinition& def, int64_t now, RunView& run) {
  bool any_queued = false;
  for (const StepView& s : run.steps) any_queued = any_queued || s.status == "queued";
  if (!any_queued) return Status::Ok();
  SCIMESH_ASSIGN_OR_RETURN(LiveOffers live, ReadLiveOffers(db, def.workflow, def.version, now));
  for (StepView& s : run.steps) {
    if (s.status != "queued") continue;
    const StepDefinition* step = def.FindStep(s.step_id);
    if (step != nullptr) s.unfittable = WhyUnfittable(*step, live);
  }
  return Status::Ok();
}

}  // namespace scimesh::coordinator

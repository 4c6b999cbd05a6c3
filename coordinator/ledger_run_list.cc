// Ledger: the run list — the runs a key may read, newest first, bounded.
#include "coordinator/ledger_internal.h"
#include "coordinator/tenancy.h"

namespace scimesh::coordinator {
namespace {

// ?1: the owner whose runs are listed (NULL: every run); ?2 workflow and ?3
// status (NULL: any); ?4 how many rows at most.
constexpr char kSelectRunList[] =
    "SELECT r.run_id, r.workflow, r.version, r.status, r.correlation, r.created_at, r.finished_at FROM runs r "
    "WHERE (?1 IS NULL OR EXISTS (SELECT 1 FROM run_owners o WHERE o.run_id = r.run_id AND o.key_name = ?1)) "
    "AND (?2 IS NULL OR r.workflow = ?2) AND (?3 IS NULL OR r.status = ?3) ORDER BY r.seq DESC LIMIT ?4";

}  // namespace

ApiResult<RunList> Ledger::ListRuns(const RunListQuery& query, const KeyIdentity& key) {
  return Transact<RunList>([&](Tx&) -> ApiResult<RunList> {
    // Who reads every run is MayReadRun's rule: without an owner to compare,
    // a key that may read a run of another key reads them all.
    const bool every_run = MayReadRunOfAnyOwner(key);
    const std::optional<std::string> owner = every_run ? std::nullopt : std::optional<std::string>(key.name);
    RunList list;
    // One row past the limit says whether there are more.
    LEDGER_CHECK(db_->ForEachRow(kSelectRunList, {owner, query.workflow, query.state, query.limit + 1},
                                 [&](const Row& r) {
                                   RunSummary s;
                                   s.run_id = r.Text(0);
                                   s.workflow = r.Text(1);
                                   s.version = r.Text(2);
                                   s.status = r.Text(3);
                                   s.correlation_json = r.Text(4);
                                   s.created_at = FormatWireTime(r.Int(5));
                                   if (auto at = r.OptInt(6)) s.finished_at = FormatWireTime(*at);
                                   list.runs.push_back(std::move(s));
                                 }));
    if (static_cast<int64_t>(list.runs.size()) > query.limit) {
      list.runs.resize(static_cast<size_t>(query.limit));
      list.more = true;
    }
    return list;
  });
}

}  // namespace scimesh::coordinator

// Unfittable steps (docs/protocol.md "Unfittable steps"): each worker's
// largest offer, remembered from the `free` of its claims, and the queued
// steps of a run that no live worker holding their definition can fit.
//
// Functions on the ledger's open database, called inside its transactions
// (one thread at a time, as every ledger call).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "coordinator/capacity.h"
#include "coordinator/database.h"
#include "coordinator/definition.h"
#include "protocol/wire/wire.h"

namespace scimesh::coordinator {

// A worker is live while it claimed within this long, or holds a lease.
inline constexpr int64_t kLiveWorkerMs = 90000;

// Records a claim by `worker_id` at `now` (ms): it is seen (live); with
// `free`, the walltime it offers, and when `holds_nothing` its nodes too (the
// `free` of an idle worker is all it has). Without `free` the worker's
// capacity is unknown from here on, so it never makes a step unfittable.
Status RecordClaimOffer(Database& db, const std::string& worker_id, const FreeCapacity* free, int64_t now);

// The largest offers of the live workers holding one (workflow, version).
struct LiveOffers {
  std::vector<FreeCapacity> offers;  // one per live worker with a known offer
  int64_t workers = 0;               // live workers holding it
  bool known = true;                 // false: one of them has no known offer
};
Result<LiveOffers> ReadLiveOffers(Database& db, const std::string& workflow, const std::string& version,
                                  int64_t now);

// Why `step` fits none of `live`'s offers (the run show `unfittable`);
// nullopt when one fits, when no live worker holds it, or one is of unknown size.
std::optional<UnfittableView> WhyUnfittable(const StepDefinition& step, const LiveOffers& live);

// Sets `unfittable` on every queued step of `run` (of definition `def`) that
// fits none of the largest offers of the live workers holding `def`. Leaves
// all unset when no live worker holds it, or one of them has no known offer.
Status MarkUnfittableSteps(Database& db, const WorkflowDefinition& def, int64_t now, RunView& run);

}  // namespace scimesh::coordinator

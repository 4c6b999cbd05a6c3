// Why a step fits no offer (docs/protocol.md "Unfittable steps"): the one
// wording of "needs 3 nodes, largest offer 2", used by the coordinator for
// `run show` and by the launcher for its own allocation.
//
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/wire/wire.h"

namespace scimesh {

// Empty when some offer in `offers` can take a step needing `r` for
// `walltime_s` (the claim rule: at least r.nodes nodes each with cpus >=
// ranks_per_node * cpus_per_rank and gpus >= ranks_per_node * gpus_per_rank,
// and walltime_s <= walltime_s offered), or when `offers` is empty. Else what
// the step needs against the largest offer, e.g. "needs 3 nodes, largest
// offer 2", "needs 2 nodes with 8 cpus each, largest offer 1 such node",
// "needs 7200 s of walltime, largest offer 3480 s".
std::optional<std::string> WhyNoOfferFits(const Resources& r, int64_t walltime_s,
                                          const std::vector<FreeCapacity>& offers);

}  // namespace scimesh

// Capacity-aware offers (docs/protocol.md "claim", `free`): does a step's
// demand fit what a worker says is free, and what is left once it is taken.
// Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "coordinator/definition.h"
#include "protocol/wire/wire.h"

namespace scimesh::coordinator {

// FreeNode and FreeCapacity are the wire types of protocol/wire.h.

// True when a step needing `r` for `walltime_s` fits `free`: walltime_s <=
// free.walltime_s and at least r.nodes nodes each with cpus >= ranks_per_node
// * cpus_per_rank and gpus >= ranks_per_node * gpus_per_rank. On success the
// demand is subtracted from the fitting nodes with the most free cpus (first
// fit in that order; ties keep the worker's order), so a next call sees only
// what is left. On failure `free` is unchanged.
bool TakeCapacity(FreeCapacity& free, const Resources& r, int64_t walltime_s);

// How many copies of a step needing `r` for `walltime_s` fit `free` at once,
// taken one after the other by TakeCapacity; at most `at_most`.
int64_t CopiesThatFit(FreeCapacity free, const Resources& r, int64_t walltime_s, int64_t at_most);

}  // namespace scimesh::coordinator

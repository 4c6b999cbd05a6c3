// From a claim to the placer: a lease's request, and the order in which the
// leases of one claim are placed (widest first).
#pragma once

#include <vector>

#include "launcher/placement/placement.h"
#include "protocol/wire/wire.h"

namespace scimesh::launcher {

// What the placer is asked for a lease. Pure.
StepResources ResourcesOf(const Lease& lease);

// Sorts `leases` (stable) so that steps spanning more nodes, then needing
// more cpus and GPUs per node, are placed first. The coordinator offers a set
// that fits the claim's `free` as a whole; placing in arrival order can fill
// a node with one-cpu steps that a two-node step offered alongside needed
// (then that step cannot be placed although the set fits). Pure.
void OrderForPlacement(std::vector<Lease>& leases);

}  // namespace scimesh::launcher

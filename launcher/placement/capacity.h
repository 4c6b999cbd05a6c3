// What the launcher can still offer the coordinator: the claim's `free` field
// (per-node free cpus and gpus, walltime left minus a drain margin) and `max`.
//
// Pure functions on values; thread-safe.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "launcher/placement/placement.h"
#include "protocol/wire/wire.h"

namespace scimesh::launcher {

struct ClaimPolicy {
  // Kept back before the allocation ends: time to stop steps within their
  // grace, upload, report and exit before SLURM kills the job.
  std::chrono::seconds drain_margin{120};
  // Most steps held at once (what the launcher registered as `concurrency`).
  int concurrency = 64;
};

// The `walltime_s` offered when the allocation has no end: the protocol's
// largest step walltime.
inline constexpr long long kUnlimitedWalltimeS = 604800;

struct ClaimCapacity {
  FreeCapacity free;  // the claim's `free` field
  int max = 0;        // the claim's `max`; 0 means: do not claim now
};

// Rules (docs/placement.md):
// - free.nodes lists the nodes with at least one free cpu, in allocation
//   order; a node without one can take no step.
// - free.walltime_s = time_left - drain_margin, at least 0; without an end
//   (time_left empty) kUnlimitedWalltimeS.
// - max = min(total free cpus, 64, concurrency - held): every step needs at
//   least one cpu, so no more steps than free cpus can start, and a
//   coordinator that honours `free` packs its offers into it. That is at
//   least the number of nodes with a free cpu. max is 0 when walltime_s < 1,
//   when no cpu is free, or when `held` reached the concurrency.
ClaimCapacity ComputeClaimCapacity(const std::vector<NodeFree>& nodes, std::optional<std::chrono::seconds> time_left,
                                   size_t held, const ClaimPolicy& policy);

}  // namespace scimesh::launcher

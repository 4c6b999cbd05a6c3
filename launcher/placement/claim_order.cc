// ResourcesOf and OrderForPlacement: a claim's leases as the placer sees them.
#include "launcher/placement/claim_order.h"

#include <algorithm>
#include <tuple>

namespace scimesh::launcher {

StepResources ResourcesOf(const Lease& lease) {
  StepResources r;
  r.nodes = static_cast<int>(lease.resources.nodes);
  r.ranks_per_node = static_cast<int>(lease.resources.ranks_per_node);
  r.cpus_per_rank = static_cast<int>(lease.resources.cpus_per_rank);
  r.gpus_per_rank = static_cast<int>(lease.resources.gpus_per_rank);
  return r;
}

void OrderForPlacement(std::vector<Lease>& leases) {
  auto width = [](const Lease& l) {
    const Resources& r = l.resources;
    return std::make_tuple(r.nodes, r.ranks_per_node * r.cpus_per_rank, r.ranks_per_node * r.gpus_per_rank);
  };
  std::stable_sort(leases.begin(), leases.end(), [&](const Lease& a, const Lease& b) { return width(a) > width(b); });
}

}  // namespace scimesh::launcher

// OrderForPlacement: widest steps of a claim first.
#include "launcher/claim_order.h"

#include <algorithm>
#include <tuple>

namespace scimesh::launcher {

void OrderForPlacement(std::vector<Lease>& leases) {
  auto width = [](const Lease& l) {
    const Resources& r = l.resources;
    return std::make_tuple(r.nodes, r.ranks_per_node * r.cpus_per_rank, r.ranks_per_node * r.gpus_per_rank);
  };
  std::stable_sort(leases.begin(), leases.end(), [&](const Lease& a, const Lease& b) { return width(a) > width(b); });
}

}  // namespace scimesh::launcher

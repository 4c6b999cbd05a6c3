// The claim's `free` field and `max`, from the placer's free capacity and the time left.
#include "launcher/placement/capacity.h"

#include <algorithm>

namespace scimesh::launcher {

ClaimCapacity ComputeClaimCapacity(const std::vector<NodeFree>& nodes, std::optional<std::chrono::seconds> time_left,
                                   size_t held, const ClaimPolicy& policy) {
  ClaimCapacity out;
  long long free_cpus = 0;
  for (const NodeFree& n : nodes) {
    if (n.cpus <= 0) continue;
    out.free.nodes.push_back(FreeNode{n.name, n.cpus, n.gpus});
    free_cpus += n.cpus;
  }
  out.free.walltime_s =
      time_left.has_value() ? std::max<long long>(0, (*time_left - policy.drain_margin).count()) : kUnlimitedWalltimeS;
  const long long slots = static_cast<long long>(policy.concurrency) - static_cast<long long>(held);
  long long max = std::min<long long>({free_cpus, 64, slots});
  if (out.free.walltime_s < 1) max = 0;
  out.max = static_cast<int>(std::max<long long>(0, max));
  return out;
}

}  // namespace scimesh::launcher

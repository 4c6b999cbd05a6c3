// First-fit packing of step demands onto the free nodes a worker reports.
#include "coordinator/capacity.h"

#include <algorithm>
#include <numeric>

namespace scimesh::coordinator {

bool TakeCapacity(FreeCapacity& free, const Resources& r, int64_t walltime_s) {
  if (walltime_s > free.walltime_s) return false;
  const int64_t need_cpus = CpusPerNode(r);
  const int64_t need_gpus = GpusPerNode(r);
  std::vector<size_t> order(free.nodes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return free.nodes[a].cpus > free.nodes[b].cpus; });
  std::vector<size_t> chosen;
  for (size_t i : order) {
    if (static_cast<int64_t>(chosen.size()) == r.nodes) break;
    if (free.nodes[i].cpus >= need_cpus && free.nodes[i].gpus >= need_gpus) chosen.push_back(i);
  }
  if (static_cast<int64_t>(chosen.size()) < r.nodes) return false;
  for (size_t i : chosen) {
    free.nodes[i].cpus -= need_cpus;
    free.nodes[i].gpus -= need_gpus;
  }
  return true;
}

int64_t CopiesThatFit(FreeCapacity free, const Resources& r, int64_t walltime_s, int64_t at_most) {
  int64_t n = 0;
  while (n < at_most && TakeCapacity(free, r, walltime_s)) ++n;
  return n;
}

}  // namespace scimesh::coordinator

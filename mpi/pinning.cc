// Pinning a rank with hwloc, and the environment its threads and GPUs need.
#include "mpi/pinning.h"

#include <hwloc.h>

#include <cstdlib>
#include <memory>

#include "protocol/attempt/rank_environment.h"

namespace scimesh::mpi {
namespace {

struct TopologyCloser {
  void operator()(hwloc_topology* t) const { hwloc_topology_destroy(t); }
};
struct BitmapFree {
  void operator()(hwloc_bitmap_s* b) const { hwloc_bitmap_free(b); }
};
using Bitmap = std::unique_ptr<hwloc_bitmap_s, BitmapFree>;

std::string ListOf(hwloc_const_bitmap_t set) {
  char* text = nullptr;
  hwloc_bitmap_list_asprintf(&text, set);
  std::string out = text != nullptr ? text : "";
  std::free(text);
  return out;
}

}  // namespace

Result<PinReport> PinProcess(const RankAssignment& assignment) {
  if (assignment.cpus.empty()) return Status::InvalidArgument("the rank's assignment has no cpus");
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) return Status::Internal("hwloc_topology_init failed");
  std::unique_ptr<hwloc_topology, TopologyCloser> topo(raw);
  if (hwloc_topology_load(topo.get()) != 0) return Status::Internal("hwloc_topology_load failed");

  Bitmap allowed(hwloc_bitmap_alloc());
  if (hwloc_get_cpubind(topo.get(), allowed.get(), HWLOC_CPUBIND_PROCESS) != 0) {
    hwloc_bitmap_copy(allowed.get(), hwloc_topology_get_allowed_cpuset(topo.get()));
  }
  Bitmap want(hwloc_bitmap_alloc());
  for (unsigned cpu : assignment.cpus) hwloc_bitmap_set(want.get(), cpu);
  hwloc_bitmap_and(want.get(), want.get(), allowed.get());

  PinReport report;
  report.allowed = ListOf(allowed.get());
  if (hwloc_bitmap_iszero(want.get())) {
    // The scheduler bound this task already and elsewhere: its binding wins.
    report.assignment_honoured = false;
    report.bound_to = report.allowed;
    return report;
  }
  if (hwloc_set_cpubind(topo.get(), want.get(), HWLOC_CPUBIND_PROCESS) != 0) {
    return Status::Io("hwloc_set_cpubind to " + ListOf(want.get()) + " failed");
  }
  report.bound_to = ListOf(want.get());
  report.assignment_honoured = hwloc_bitmap_weight(want.get()) == static_cast<int>(assignment.cpus.size());
  return report;
}

void ExportRankEnvironment(const RankAssignment& assignment) {
  const std::vector<int> cpus(assignment.cpus.begin(), assignment.cpus.end());
  for (const RankVariable& v : RankEnvironment(cpus, assignment.gpus)) {
    setenv(v.name.c_str(), v.value.c_str(), v.overrides ? 1 : 0);
  }
}

}  // namespace scimesh::mpi

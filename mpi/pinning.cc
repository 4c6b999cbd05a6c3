// Pinning a rank with hwloc, and the environment its threads and GPUs need.
#include "mpi/pinning.h"

#include <hwloc.h>

#include <cstdlib>
#include <memory>

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

std::string Join(const std::vector<int>& v) {
  std::string out;
  for (int x : v) {
    if (!out.empty()) out += ',';
    out += std::to_string(x);
  }
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
  const std::string threads = std::to_string(assignment.cpus.empty() ? 1 : assignment.cpus.size());
  std::string places;
  for (unsigned cpu : assignment.cpus) {
    if (!places.empty()) places += ',';
    places += '{' + std::to_string(cpu) + '}';
  }
  // A user's explicit choice wins over ours (overwrite = 0).
  setenv("OMP_NUM_THREADS", threads.c_str(), 0);
  if (!places.empty()) setenv("OMP_PLACES", places.c_str(), 0);
  setenv("OMP_PROC_BIND", "close", 0);
  // GPU visibility is the launcher's decision: a rank sees exactly its GPUs.
  const std::string gpus = Join(assignment.gpus);
  setenv("CUDA_VISIBLE_DEVICES", gpus.c_str(), 1);
  setenv("ROCR_VISIBLE_DEVICES", gpus.c_str(), 1);
  setenv("ZE_AFFINITY_MASK", gpus.c_str(), 1);
}

}  // namespace scimesh::mpi

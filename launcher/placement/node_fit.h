// One node's free and busy PUs and GPUs, and the choice of exact PUs and GPUs
// for the ranks a step puts on that node (see docs/placement.md).
//
// Not thread-safe: Placer serialises every call. A NodeState shares its
// immutable Topology and owns its busy flags.
#pragma once

#include <memory>
#include <vector>

#include "launcher/placement/topology.h"
#include "protocol/util/status.h"

namespace scimesh::launcher {

// What one rank gets on one node, as indices into the topology's pus() and gpus().
struct RankSlot {
  std::vector<int> pus;
  std::vector<int> gpus;
};

// The ranks a step puts on one node. `shares_cores` says some rank uses a
// core that also holds a PU of another rank or step: the node lacked idle
// cores for one PU per core.
struct NodeFit {
  std::vector<RankSlot> ranks;
  bool shares_cores = false;
};

class NodeState {
 public:
  // `usable_pus` and `usable_gpus` say, per topology PU and GPU, whether
  // steps on this node may use it (the allowed cpuset, SLURM's cpu count).
  NodeState(std::shared_ptr<const Topology> topology, std::vector<bool> usable_pus, std::vector<bool> usable_gpus);

  const Topology& topology() const { return *topology_; }
  // Counts are kept up to date by Take and Give: O(1).
  int usable_pu_count() const { return usable_pu_count_; }
  int usable_gpu_count() const { return usable_gpu_count_; }
  int free_pus() const { return free_pus_; }
  int idle_cores() const { return idle_cores_; }  // cores with a usable PU and none of them busy
  int free_gpus() const { return free_gpus_; }

  // Chooses PUs and GPUs for `ranks` ranks of `cpus` PUs and `gpus` GPUs
  // each, without changing the state. Succeeds whenever free_pus() >=
  // ranks*cpus and free_gpus() >= ranks*gpus; otherwise Unavailable.
  // Deterministic: the same state and request give the same answer.
  Result<NodeFit> Fit(int ranks, int cpus, int gpus) const;

  // Marks a fit's PUs and GPUs busy / free again. Internal error (and no
  // change) when one is already busy / already free: a bookkeeping bug.
  Status Take(const NodeFit& fit);
  Status Give(const NodeFit& fit);

 private:
  std::shared_ptr<const Topology> topology_;
  std::vector<bool> usable_pus_;
  std::vector<bool> usable_gpus_;
  std::vector<bool> busy_pus_;
  std::vector<bool> busy_gpus_;
  std::vector<int> busy_in_core_;  // busy usable PUs per core
  int usable_pu_count_ = 0;
  int usable_gpu_count_ = 0;
  int free_pus_ = 0;
  int free_gpus_ = 0;
  int idle_cores_ = 0;
};

}  // namespace scimesh::launcher

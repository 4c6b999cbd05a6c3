// Placement: which nodes, exact PUs and GPUs each rank of a step gets, and the
// bookkeeping of what every held placement uses (see docs/placement.md).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "launcher/placement/node_fit.h"
#include "launcher/placement/topology.h"
#include "protocol/util/status.h"

namespace scimesh::launcher {

// A step's demand, as in the lease's `resources` (docs/protocol.md), plus an
// optional total rank count for definitions that give `ranks` instead of
// `ranks_per_node`.
struct StepResources {
  int nodes = 1;
  int ranks_per_node = 1;  // ignored when ranks > 0
  int ranks = 0;           // total ranks, >= nodes; spread as srun's block distribution does
  int cpus_per_rank = 1;
  int gpus_per_rank = 0;
};

// InvalidArgument naming the field when a value is out of range.
Status ValidateStepResources(const StepResources& step);

// One node of the allocation as the placer sees it.
struct NodeSpec {
  NodeSpec() = default;
  NodeSpec(std::string node_name, std::shared_ptr<const Topology> node_topology)
      : name(std::move(node_name)), topology(std::move(node_topology)) {}

  std::string name;                          // as SLURM names it ("n1")
  std::shared_ptr<const Topology> topology;  // shared between homogeneous nodes
  // true: only the topology's allowed PUs (this node's own view, or a probe
  // run on it). false: every PU of the topology; for another node assumed to
  // be like this one, whose allowed cpuset is not known here.
  bool use_allowed_set = true;
  int cpus = -1;  // at most this many PUs (SLURM_JOB_CPUS_PER_NODE), whole cores first; -1: all
  int gpus = -1;  // at most this many GPUs, lowest index first; -1: all
  std::optional<std::vector<int>> gpu_indices;  // exactly these GPU indices (SLURM_JOB_GPUS); wins over gpus
};

struct RankPlacement {
  int rank = 0;
  int node = 0;             // index into Placement::nodes
  std::vector<int> cpus;    // OS indices of the PUs, sorted
  std::vector<int> gpus;    // GPU indices on the node (Gpu::index), nearest first
  std::vector<int> numa;    // OS indices of the NUMA nodes local to those PUs
};

struct NodePlacement {
  std::string name;
  int ranks = 0;
  std::vector<int> cpus;  // every PU of this step on the node, sorted
  std::vector<int> gpus;  // every GPU of this step on the node, sorted
};

struct Placement {
  uint64_t id = 0;                   // for Placer::Release
  std::vector<NodePlacement> nodes;  // in allocation order; ranks are numbered block-wise in this order
  std::vector<RankPlacement> ranks;  // by rank
  bool shares_cores = false;         // some rank uses a hyperthread sibling of a busy core
};

// placement.json for the attempt directory: {"ranks":[{"rank":0,"node":"n1",
// "cpus":[0,1],"gpus":[],"numa":[0]}, ...]}, what scimesh-rank reads.
std::string PlacementJson(const Placement& placement);

// "n1 ranks 0-1 cpus 0-3 gpus 0,1; n2 ranks 2-3 cpus 0-3": for logs and events.
std::string DescribePlacement(const Placement& placement);

// Free capacity of one node right now.
struct NodeFree {
  std::string name;
  int cpus = 0;        // free usable PUs
  int idle_cores = 0;  // cores none of whose usable PUs is taken
  int gpus = 0;        // free usable GPUs
};

// Places steps on the allocation's nodes and remembers what each placement
// holds until it is released. Thread-safe: every method may be called from
// any thread; calls are serialised by an internal mutex. Deterministic: the
// same nodes and the same sequence of calls give the same placements.
class Placer {
 public:
  // Fails on an empty node list, a duplicate name, a missing topology, or a
  // GPU index the topology does not have.
  static Result<std::unique_ptr<Placer>> Create(std::vector<NodeSpec> nodes);

  // Chooses nodes, PUs and GPUs for `step` and holds them. Fails with
  // InvalidArgument when the step is malformed or could never fit this
  // allocation even empty, and with Unavailable when it does not fit now;
  // the message names what it needs and what each node has.
  Result<Placement> Place(const StepResources& step);

  // Returns a placement's PUs and GPUs. NotFound for an unknown or already
  // released id.
  Status Release(uint64_t placement_id);

  // Free capacity per node, in allocation order.
  std::vector<NodeFree> Free() const;

  size_t held() const;

 private:
  struct Node {
    std::string name;
    NodeState state;
  };
  struct Held {
    std::vector<std::pair<size_t, NodeFit>> fits;  // node index, what it took there
  };

  struct Demand;  // what a step needs of each node (placement.cc)

  explicit Placer(std::vector<Node> nodes) : nodes_(std::move(nodes)) {}

  // Place's steps, each with mu_ held. The nodes with room for `demand` now,
  // in allocation order; InvalidArgument when never, Unavailable when not now.
  Result<std::vector<size_t>> Candidates(const Demand& demand) const;
  // The step's nodes among `candidates` (as many as it asks for), in allocation order.
  std::vector<size_t> Choose(std::vector<size_t> candidates, const Demand& demand) const;
  // The step's ranks numbered block-wise over `chosen`, fitted to each node's
  // free PUs and GPUs; what each node would give is appended to `held`.
  Result<Placement> RanksOn(const std::vector<size_t>& chosen, const Demand& demand, Held* held) const;
  // Takes what `held` names from its nodes: all of it, or (on failure) none.
  Status Hold(const Held& held);

  mutable std::mutex mu_;
  std::vector<Node> nodes_;
  std::map<uint64_t, Held> held_;
  uint64_t next_id_ = 1;
};

}  // namespace scimesh::launcher

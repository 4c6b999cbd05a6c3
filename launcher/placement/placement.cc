// The Placer: choosing nodes for a step, numbering its ranks, holding and
// releasing what each placement uses.
#include "launcher/placement/placement.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "protocol/util/index_list.h"
#include "protocol/attempt/placement_file.h"

namespace scimesh::launcher {
namespace {

std::string Plural(long long n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

// Which PUs a node may use: the allowed set (or all), then SLURM's count,
// taking whole cores in logical order as SLURM's core allocation does.
std::vector<bool> UsablePus(const NodeSpec& spec) {
  const Topology& topo = *spec.topology;
  std::vector<bool> usable(topo.pus().size(), false);
  int available = 0;
  for (size_t i = 0; i < topo.pus().size(); ++i) {
    usable[i] = !spec.use_allowed_set || topo.pus()[i].allowed;
    available += usable[i];
  }
  if (spec.cpus < 0) return usable;
  if (spec.cpus > available) {
    spdlog::warn("launcher: node {} is given {} cpus but its topology has {} usable PUs; using {}", spec.name,
                 spec.cpus, available, available);
    return usable;
  }
  int kept = 0;
  for (const Core& core : topo.cores()) {
    for (int pu : core.pus) {
      if (!usable[static_cast<size_t>(pu)]) continue;
      if (kept < spec.cpus) {
        ++kept;
      } else {
        usable[static_cast<size_t>(pu)] = false;
      }
    }
  }
  return usable;
}

Result<std::vector<bool>> UsableGpus(const NodeSpec& spec) {
  const size_t n = spec.topology->gpus().size();
  std::vector<bool> usable(n, false);
  if (spec.gpu_indices.has_value()) {
    for (int g : *spec.gpu_indices) {
      if (g < 0 || static_cast<size_t>(g) >= n) {
        return Status::InvalidArgument("node " + spec.name + ": GPU index " + std::to_string(g) +
                                       " is not among its " + std::to_string(n) + " GPUs");
      }
      usable[static_cast<size_t>(g)] = true;
    }
    return usable;
  }
  const size_t count = spec.gpus < 0 ? n : std::min(n, static_cast<size_t>(spec.gpus));
  for (size_t i = 0; i < count; ++i) usable[i] = true;
  return usable;
}

// "n1 has 2, n2 has 4" (cpus only) or "n1 has 2 cpus 0 gpus, ..."; at most 8 nodes.
template <typename CpusOf, typename GpusOf>
std::string EachNode(const std::vector<std::string>& names, CpusOf cpus_of, GpusOf gpus_of, bool with_gpus) {
  std::string out;
  const size_t shown = std::min<size_t>(names.size(), 8);
  for (size_t i = 0; i < shown; ++i) {
    if (i > 0) out += ", ";
    out += names[i] + " has " + std::to_string(cpus_of(i));
    if (with_gpus) out += " cpus " + std::to_string(gpus_of(i)) + " gpus";
  }
  if (names.size() > shown) out += ", and " + std::to_string(names.size() - shown) + " more";
  return out;
}

// One rank's slot as placement.json names it: OS indices of its PUs, sorted;
// the NUMA nodes local to them; its GPUs.
RankPlacement RankIn(const Topology& topo, const RankSlot& slot) {
  RankPlacement rp;
  std::set<int> numa;
  for (int pu : slot.pus) {
    rp.cpus.push_back(topo.pus()[static_cast<size_t>(pu)].os_index);
    const Core& core = topo.cores()[static_cast<size_t>(topo.pus()[static_cast<size_t>(pu)].core)];
    numa.insert(core.numa.begin(), core.numa.end());
  }
  std::sort(rp.cpus.begin(), rp.cpus.end());
  rp.numa.assign(numa.begin(), numa.end());
  rp.gpus = slot.gpus;
  return rp;
}

}  // namespace

Status ValidateStepResources(const StepResources& step) {
  auto bad = [](std::string_view field, std::string_view rule) {
    return Status::InvalidArgument("resources." + std::string(field) + " " + std::string(rule));
  };
  if (step.nodes < 1 || step.nodes > 65536) return bad("nodes", "must be 1..65536");
  if (step.cpus_per_rank < 1 || step.cpus_per_rank > 65536) return bad("cpus_per_rank", "must be 1..65536");
  if (step.gpus_per_rank < 0 || step.gpus_per_rank > 1024) return bad("gpus_per_rank", "must be 0..1024");
  if (step.ranks > 0) {
    if (step.ranks < step.nodes) return bad("ranks", "must be at least nodes (one rank per node)");
    if (step.ranks > (1 << 24)) return bad("ranks", "must be at most 16777216");
  } else if (step.ranks_per_node < 1 || step.ranks_per_node > 65536) {
    return bad("ranks_per_node", "must be 1..65536");
  }
  return Status::Ok();
}

Result<std::unique_ptr<Placer>> Placer::Create(std::vector<NodeSpec> specs) {
  if (specs.empty()) return Status::InvalidArgument("placement: the allocation has no nodes");
  std::set<std::string> names;
  std::vector<Node> nodes;
  for (const NodeSpec& spec : specs) {
    if (spec.name.empty()) return Status::InvalidArgument("placement: a node has no name");
    if (!names.insert(spec.name).second) return Status::InvalidArgument("placement: node " + spec.name + " twice");
    if (spec.topology == nullptr) return Status::InvalidArgument("placement: node " + spec.name + " has no topology");
    auto gpus = UsableGpus(spec);
    if (!gpus.ok()) return gpus.status();
    nodes.push_back(Node{spec.name, NodeState(spec.topology, UsablePus(spec), std::move(*gpus))});
  }
  return std::unique_ptr<Placer>(new Placer(std::move(nodes)));
}

// What a step needs of each node it is placed on, and how the refusals say it.
struct Placer::Demand {
  explicit Demand(const StepResources& resources);

  const StepResources& step;
  long long ranks = 0;     // in all
  long long per_node = 0;  // on the node with the most
  long long cpus = 0, gpus = 0;
  bool with_gpus = false;
  std::string text;  // "needs 2 nodes with 4 free cpus each (2 ranks x 2 cpus)"
};

Placer::Demand::Demand(const StepResources& resources) : step(resources) {
  ranks = step.ranks > 0 ? step.ranks : static_cast<long long>(step.nodes) * step.ranks_per_node;
  per_node = (ranks + step.nodes - 1) / step.nodes;
  cpus = per_node * step.cpus_per_rank;
  gpus = per_node * step.gpus_per_rank;
  with_gpus = step.gpus_per_rank > 0;
  text = "needs " + Plural(step.nodes, "node", "nodes") + " with " + Plural(cpus, "free cpu", "free cpus") +
         (with_gpus ? " and " + Plural(gpus, "free gpu", "free gpus") : "") + (step.nodes > 1 ? " each" : "") +
         " (" + Plural(per_node, "rank", "ranks") + " x " + Plural(step.cpus_per_rank, "cpu", "cpus") +
         (with_gpus ? ", " + Plural(step.gpus_per_rank, "gpu", "gpus") : "") + ")";
}

Result<Placement> Placer::Place(const StepResources& step) {
  SCIMESH_RETURN_IF_ERROR(ValidateStepResources(step));
  const Demand demand(step);
  std::lock_guard<std::mutex> lock(mu_);
  SCIMESH_ASSIGN_OR_RETURN(std::vector<size_t> candidates, Candidates(demand));
  Held held;
  SCIMESH_ASSIGN_OR_RETURN(Placement placement, RanksOn(Choose(std::move(candidates), demand), demand, &held));
  SCIMESH_RETURN_IF_ERROR(Hold(held));
  placement.id = next_id_++;
  held_.emplace(placement.id, std::move(held));
  return placement;
}

Result<std::vector<size_t>> Placer::Candidates(const Demand& demand) const {
  const StepResources& step = demand.step;
  std::vector<std::string> names;
  for (const Node& n : nodes_) names.push_back(n.name);
  if (static_cast<size_t>(step.nodes) > nodes_.size()) {
    return Status::InvalidArgument("step " + demand.text + "; the allocation has " +
                                   Plural(static_cast<long long>(nodes_.size()), "node", "nodes"));
  }
  // Could it fit an empty allocation? If not, waiting will not help.
  size_t ever = 0;
  for (const Node& n : nodes_) {
    ever += n.state.usable_pu_count() >= demand.cpus && n.state.usable_gpu_count() >= demand.gpus;
  }
  if (ever < static_cast<size_t>(step.nodes)) {
    return Status::InvalidArgument(
        "step " + demand.text + " and can never fit: when idle " +
        EachNode(
            names, [&](size_t i) { return nodes_[i].state.usable_pu_count(); },
            [&](size_t i) { return nodes_[i].state.usable_gpu_count(); }, demand.with_gpus));
  }
  std::vector<size_t> candidates;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].state.free_pus() >= demand.cpus && nodes_[i].state.free_gpus() >= demand.gpus) {
      candidates.push_back(i);
    }
  }
  if (candidates.size() < static_cast<size_t>(step.nodes)) {
    return Status::Unavailable(
        "step " + demand.text + "; " + std::to_string(candidates.size()) + " of " + std::to_string(nodes_.size()) +
        (candidates.size() == 1 ? " nodes has them: " : " nodes have them: ") +
        EachNode(
            names, [&](size_t i) { return nodes_[i].state.free_pus(); },
            [&](size_t i) { return nodes_[i].state.free_gpus(); }, demand.with_gpus));
  }
  return candidates;
}

std::vector<size_t> Placer::Choose(std::vector<size_t> candidates, const Demand& demand) const {
  // Nodes where the step gets idle cores first; a CPU-only step away from
  // free GPUs; then the fullest node that fits (packing keeps whole nodes
  // free for multi-node steps); then allocation order.
  std::vector<std::tuple<int, int, int, size_t>> ranked;
  for (size_t i : candidates) {
    const NodeState& s = nodes_[i].state;
    ranked.emplace_back(s.idle_cores() >= demand.cpus ? 0 : 1, demand.with_gpus ? 0 : s.free_gpus(), s.free_pus(), i);
  }
  std::partial_sort(ranked.begin(), ranked.begin() + demand.step.nodes, ranked.end());
  candidates.resize(static_cast<size_t>(demand.step.nodes));
  for (size_t k = 0; k < candidates.size(); ++k) candidates[k] = std::get<3>(ranked[k]);
  // srun numbers ranks block-wise over the nodes in the allocation's order.
  std::sort(candidates.begin(), candidates.end());
  return candidates;
}

Result<Placement> Placer::RanksOn(const std::vector<size_t>& chosen, const Demand& demand, Held* held) const {
  const StepResources& step = demand.step;
  Placement placement;
  int next_rank = 0;
  for (size_t k = 0; k < chosen.size(); ++k) {
    const size_t node = chosen[k];
    const long long here = demand.ranks / step.nodes + (static_cast<long long>(k) < demand.ranks % step.nodes ? 1 : 0);
    auto fit = nodes_[node].state.Fit(static_cast<int>(here), step.cpus_per_rank, step.gpus_per_rank);
    if (!fit.ok()) return Status::Internal("placement on " + nodes_[node].name + ": " + fit.status().message());
    NodePlacement np;
    np.name = nodes_[node].name;
    np.ranks = static_cast<int>(here);
    for (const RankSlot& slot : fit->ranks) {
      RankPlacement rp = RankIn(nodes_[node].state.topology(), slot);
      rp.rank = next_rank++;
      rp.node = static_cast<int>(k);
      np.cpus.insert(np.cpus.end(), rp.cpus.begin(), rp.cpus.end());
      np.gpus.insert(np.gpus.end(), rp.gpus.begin(), rp.gpus.end());
      placement.ranks.push_back(std::move(rp));
    }
    std::sort(np.cpus.begin(), np.cpus.end());
    std::sort(np.gpus.begin(), np.gpus.end());
    placement.nodes.push_back(std::move(np));
    placement.shares_cores = placement.shares_cores || fit->shares_cores;
    held->fits.emplace_back(node, std::move(*fit));
  }
  return placement;
}

Status Placer::Hold(const Held& held) {
  for (size_t i = 0; i < held.fits.size(); ++i) {
    Status taken = nodes_[held.fits[i].first].state.Take(held.fits[i].second);
    if (!taken.ok()) {
      for (size_t j = 0; j < i; ++j) (void)nodes_[held.fits[j].first].state.Give(held.fits[j].second);
      return taken;
    }
  }
  return Status::Ok();
}

Status Placer::Release(uint64_t placement_id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = held_.find(placement_id);
  if (it == held_.end()) {
    return Status::NotFound("placement " + std::to_string(placement_id) + " is not held");
  }
  for (const auto& [node, fit] : it->second.fits) SCIMESH_RETURN_IF_ERROR(nodes_[node].state.Give(fit));
  held_.erase(it);
  return Status::Ok();
}

std::vector<NodeFree> Placer::Free() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<NodeFree> out;
  for (const Node& n : nodes_) {
    out.push_back({n.name, n.state.free_pus(), n.state.idle_cores(), n.state.free_gpus()});
  }
  return out;
}

size_t Placer::held() const {
  std::lock_guard<std::mutex> lock(mu_);
  return held_.size();
}

std::string PlacementJson(const Placement& placement) {
  PlacementFile file;
  for (const RankPlacement& r : placement.ranks) {
    PlacementFile::Rank out;
    out.rank = r.rank;
    out.node = placement.nodes[static_cast<size_t>(r.node)].name;
    for (int c : r.cpus) out.cpus.push_back(static_cast<unsigned>(c));
    out.gpus = r.gpus;
    out.numa = r.numa;
    file.ranks.push_back(std::move(out));
  }
  return SerializePlacementFile(file);
}

std::string DescribePlacement(const Placement& placement) {
  std::string out;
  int first_rank = 0;
  for (const NodePlacement& n : placement.nodes) {
    if (!out.empty()) out += "; ";
    out += n.name + " ranks " + std::to_string(first_rank);
    if (n.ranks > 1) out += "-" + std::to_string(first_rank + n.ranks - 1);
    out += " cpus " + FormatIndexList(n.cpus);
    if (!n.gpus.empty()) out += " gpus " + FormatIndexList(n.gpus);
    first_rank += n.ranks;
  }
  return out;
}

}  // namespace scimesh::launcher

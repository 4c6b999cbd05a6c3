// Choosing exact PUs and GPUs for a step's ranks on one node: idle cores
// before hyperthreads, the best CPU kind first, compact in the hwloc tree,
// GPUs nearest to each rank's cores.
#include "launcher/placement/node_fit.h"

#include <algorithm>
#include <tuple>

namespace scimesh::launcher {
namespace {

// kIdleCores: one PU per idle core, so no rank shares a core.
// kFreePus: any free PU, hyperthread siblings included.
enum class Mode { kIdleCores, kFreePus };

constexpr int kAnyKind = -1;

// One attempt to place a step under one mode and kind, on scratch copies of
// the busy flags.
class Search {
 public:
  Search(const Topology& topo, const std::vector<bool>& usable_pus, const std::vector<bool>& usable_gpus,
         std::vector<bool> busy_pus, std::vector<bool> busy_gpus, Mode mode, int kind)
      : topo_(topo),
        usable_pus_(usable_pus),
        usable_gpus_(usable_gpus),
        busy_pus_(std::move(busy_pus)),
        busy_gpus_(std::move(busy_gpus)),
        mode_(mode),
        kind_(kind) {}

  const std::vector<bool>& busy_pus() const { return busy_pus_; }

  // How many of the request's units (idle cores or free PUs) `domain` holds.
  int Capacity(int domain) const { return Units(domain).first; }

  // Capacity, and the sum of the units' kind ranks: when kinds mix, the
  // domain with the more performant units wins a tie.
  std::pair<int, int> Units(int domain) const {
    std::pair<int, int> total{0, 0};
    for (int core : Dom(domain).cores) {
      if (mode_ == Mode::kIdleCores) {
        if (CoreCapacity(core) > 0) {
          total.first += 1;
          total.second += PuAt(Primary(core)).kind;
        }
        continue;
      }
      for (int pu : topo_.cores()[static_cast<size_t>(core)].pus) {
        if (Free(pu) && Eligible(pu)) {
          total.first += 1;
          total.second += PuAt(pu).kind;
        }
      }
    }
    return total;
  }

  // From `domain`, the deepest descendant that alone holds `need` units and
  // `gpus` free GPUs local to it; best fit (least capacity) at each level.
  int Descend(int domain, int need, int gpus) const {
    for (;;) {
      int best = -1;
      std::tuple<int, int, int> best_key;
      for (int child : Dom(domain).children) {
        const auto [cap, kinds] = Units(child);
        const int local_gpus = LocalFreeGpus(child);
        if (cap < need || local_gpus < gpus) continue;
        // A CPU-only step keeps away from cores that GPUs are local to.
        std::tuple<int, int, int> key{gpus == 0 ? local_gpus : 0, cap, -kinds};
        if (best < 0 || key < best_key) {
          best = child;
          best_key = key;
        }
      }
      if (best < 0) return domain;
      domain = best;
    }
  }

  // Takes `need` units inside `domain` (precondition: Capacity >= need), as
  // few sub-domains as possible: the best-fitting child when one holds the
  // rest, otherwise the fullest child whole.
  std::vector<int> Gather(int domain, int need) {
    std::vector<int> out;
    const Domain& d = Dom(domain);
    if (d.children.empty()) {
      for (int core : d.cores) TakeFromCore(core, need, out);
      return out;
    }
    while (need > 0) {
      int fit = -1, big = -1, big_cap = 0;
      std::pair<int, int> fit_key, big_key;
      for (int child : d.children) {
        const auto [cap, kinds] = Units(child);
        if (cap == 0) continue;
        const std::pair<int, int> as_fit{cap, -kinds}, as_big{-cap, -kinds};
        if (cap >= need && (fit < 0 || as_fit < fit_key)) {
          fit = child;
          fit_key = as_fit;
        }
        if (big < 0 || as_big < big_key) {
          big = child;
          big_key = as_big;
          big_cap = cap;
        }
      }
      const int pick = fit >= 0 ? fit : big;
      if (pick < 0) break;  // cannot happen when Capacity(domain) >= need
      const int take = fit >= 0 ? need : big_cap;
      std::vector<int> part = Gather(pick, take);
      need -= static_cast<int>(part.size());
      out.insert(out.end(), part.begin(), part.end());
    }
    return out;
  }

  // The `count` free GPUs nearest to `pus`: the smallest domain holding the
  // rank's cores and the GPU's local cores decides; then the GPU index.
  std::vector<int> ChooseGpus(const std::vector<int>& pus, int count) {
    std::vector<std::tuple<size_t, int>> ranked;
    for (const Gpu& g : topo_.gpus()) {
      if (!usable_gpus_[static_cast<size_t>(g.index)] || busy_gpus_[static_cast<size_t>(g.index)]) continue;
      std::vector<int> cores = g.local_cores;
      for (int pu : pus) cores.push_back(PuAt(pu).core);
      ranked.emplace_back(g.local_cores.empty() ? topo_.cores().size() + 1 : CommonDomainSize(cores), g.index);
    }
    std::sort(ranked.begin(), ranked.end());
    std::vector<int> out;
    for (size_t i = 0; i < ranked.size() && static_cast<int>(out.size()) < count; ++i) {
      out.push_back(std::get<1>(ranked[i]));
      busy_gpus_[static_cast<size_t>(std::get<1>(ranked[i]))] = true;
    }
    return out;
  }

 private:
  const Domain& Dom(int d) const { return topo_.domains()[static_cast<size_t>(d)]; }
  const Pu& PuAt(int p) const { return topo_.pus()[static_cast<size_t>(p)]; }
  bool Usable(int pu) const { return usable_pus_[static_cast<size_t>(pu)]; }
  bool Free(int pu) const { return Usable(pu) && !busy_pus_[static_cast<size_t>(pu)]; }
  bool Eligible(int pu) const { return kind_ == kAnyKind || PuAt(pu).kind == kind_; }

  // The PU a core offers in idle-core mode: its best-kind usable PU.
  int Primary(int core) const {
    for (int pu : topo_.cores()[static_cast<size_t>(core)].pus) {
      if (Usable(pu)) return pu;
    }
    return -1;
  }

  bool Idle(int core) const {
    const int primary = Primary(core);
    if (primary < 0) return false;
    for (int pu : topo_.cores()[static_cast<size_t>(core)].pus) {
      if (Usable(pu) && busy_pus_[static_cast<size_t>(pu)]) return false;
    }
    return true;
  }

  int CoreCapacity(int core) const {
    if (mode_ == Mode::kIdleCores) return Idle(core) && Eligible(Primary(core)) ? 1 : 0;
    int n = 0;
    for (int pu : topo_.cores()[static_cast<size_t>(core)].pus) n += Free(pu) && Eligible(pu) ? 1 : 0;
    return n;
  }

  void TakeFromCore(int core, int& need, std::vector<int>& out) {
    if (need <= 0 || CoreCapacity(core) == 0) return;
    if (mode_ == Mode::kIdleCores) {
      const int pu = Primary(core);
      busy_pus_[static_cast<size_t>(pu)] = true;
      out.push_back(pu);
      --need;
      return;
    }
    for (int pu : topo_.cores()[static_cast<size_t>(core)].pus) {
      if (need > 0 && Free(pu) && Eligible(pu)) {
        busy_pus_[static_cast<size_t>(pu)] = true;
        out.push_back(pu);
        --need;
      }
    }
  }

  int LocalFreeGpus(int domain) const {
    int n = 0;
    for (int g : Dom(domain).gpus) n += usable_gpus_[static_cast<size_t>(g)] && !busy_gpus_[static_cast<size_t>(g)];
    return n;
  }

  // Cores in the deepest domain that contains every core in `cores`.
  size_t CommonDomainSize(const std::vector<int>& cores) const {
    const std::vector<int>& first = topo_.CorePath(cores.front());
    size_t depth = first.size();
    for (int core : cores) {
      const std::vector<int>& path = topo_.CorePath(core);
      size_t same = 0;
      while (same < depth && same < path.size() && path[same] == first[same]) ++same;
      depth = same;
    }
    return depth == 0 ? topo_.cores().size() : Dom(first[depth - 1]).cores.size();
  }

  const Topology& topo_;
  const std::vector<bool>& usable_pus_;
  const std::vector<bool>& usable_gpus_;
  std::vector<bool> busy_pus_;
  std::vector<bool> busy_gpus_;
  Mode mode_;
  int kind_;
};

}  // namespace

NodeState::NodeState(std::shared_ptr<const Topology> topology, std::vector<bool> usable_pus,
                     std::vector<bool> usable_gpus)
    : topology_(std::move(topology)),
      usable_pus_(std::move(usable_pus)),
      usable_gpus_(std::move(usable_gpus)),
      busy_pus_(usable_pus_.size(), false),
      busy_gpus_(usable_gpus_.size(), false),
      busy_in_core_(topology_->cores().size(), 0) {
  usable_pu_count_ = free_pus_ = static_cast<int>(std::count(usable_pus_.begin(), usable_pus_.end(), true));
  usable_gpu_count_ = free_gpus_ = static_cast<int>(std::count(usable_gpus_.begin(), usable_gpus_.end(), true));
  for (const Core& core : topology_->cores()) {
    idle_cores_ += std::any_of(core.pus.begin(), core.pus.end(),
                               [&](int pu) { return usable_pus_[static_cast<size_t>(pu)]; });
  }
}

Result<NodeFit> NodeState::Fit(int ranks, int cpus, int gpus) const {
  const int need = ranks * cpus;
  const int need_gpus = ranks * gpus;
  if (need > free_pus() || need_gpus > free_gpus()) {
    return Status::Unavailable("needs " + std::to_string(need) + " free cpus and " + std::to_string(need_gpus) +
                               " free gpus; has " + std::to_string(free_pus()) + " and " +
                               std::to_string(free_gpus()));
  }
  // Kinds to try alone, most performant first, then any mix of them.
  std::vector<int> kinds;
  for (size_t i = 0; i < usable_pus_.size(); ++i) {
    if (usable_pus_[i]) kinds.push_back(topology_->pus()[i].kind);
  }
  std::sort(kinds.rbegin(), kinds.rend());
  kinds.erase(std::unique(kinds.begin(), kinds.end()), kinds.end());
  if (kinds.size() <= 1) kinds.clear();
  kinds.push_back(kAnyKind);

  for (Mode mode : {Mode::kIdleCores, Mode::kFreePus}) {
    for (int kind : kinds) {
      Search s(*topology_, usable_pus_, usable_gpus_, busy_pus_, busy_gpus_, mode, kind);
      if (s.Capacity(0) < need) continue;
      // Every GPU is local to the machine, so the root always qualifies.
      const int step_domain = s.Descend(0, need, need_gpus);
      NodeFit fit;
      for (int r = 0; r < ranks; ++r) {
        RankSlot slot;
        slot.pus = s.Gather(s.Descend(step_domain, cpus, gpus), cpus);
        if (static_cast<int>(slot.pus.size()) != cpus) {
          return Status::Internal("placement: a rank got " + std::to_string(slot.pus.size()) + " of " +
                                  std::to_string(cpus) + " cpus in a domain that had them");
        }
        slot.gpus = s.ChooseGpus(slot.pus, gpus);
        std::sort(slot.pus.begin(), slot.pus.end());
        fit.ranks.push_back(std::move(slot));
      }
      // A rank shares a core when another PU of one of its cores is busy
      // with something that is not this rank.
      for (const RankSlot& slot : fit.ranks) {
        for (int pu : slot.pus) {
          for (int sibling : topology_->cores()[static_cast<size_t>(topology_->pus()[static_cast<size_t>(pu)].core)].pus) {
            if (s.busy_pus()[static_cast<size_t>(sibling)] &&
                !std::binary_search(slot.pus.begin(), slot.pus.end(), sibling)) {
              fit.shares_cores = true;
            }
          }
        }
      }
      return fit;
    }
  }
  return Status::Internal("placement: no mode fits a request that the free counts allow");
}

Status NodeState::Take(const NodeFit& fit) {
  for (const RankSlot& slot : fit.ranks) {
    for (int pu : slot.pus) {
      if (!usable_pus_[static_cast<size_t>(pu)] || busy_pus_[static_cast<size_t>(pu)]) {
        return Status::Internal("placement: PU " + std::to_string(topology_->pus()[static_cast<size_t>(pu)].os_index) +
                                " is not free");
      }
    }
    for (int g : slot.gpus) {
      if (!usable_gpus_[static_cast<size_t>(g)] || busy_gpus_[static_cast<size_t>(g)]) {
        return Status::Internal("placement: GPU " + std::to_string(g) + " is not free");
      }
    }
  }
  for (const RankSlot& slot : fit.ranks) {
    for (int pu : slot.pus) {
      busy_pus_[static_cast<size_t>(pu)] = true;
      --free_pus_;
      if (busy_in_core_[static_cast<size_t>(topology_->pus()[static_cast<size_t>(pu)].core)]++ == 0) --idle_cores_;
    }
    for (int g : slot.gpus) {
      busy_gpus_[static_cast<size_t>(g)] = true;
      --free_gpus_;
    }
  }
  return Status::Ok();
}

Status NodeState::Give(const NodeFit& fit) {
  for (const RankSlot& slot : fit.ranks) {
    for (int pu : slot.pus) {
      if (!busy_pus_[static_cast<size_t>(pu)]) return Status::Internal("placement: released PU was not taken");
    }
    for (int g : slot.gpus) {
      if (!busy_gpus_[static_cast<size_t>(g)]) return Status::Internal("placement: released GPU was not taken");
    }
  }
  for (const RankSlot& slot : fit.ranks) {
    for (int pu : slot.pus) {
      busy_pus_[static_cast<size_t>(pu)] = false;
      ++free_pus_;
      if (--busy_in_core_[static_cast<size_t>(topology_->pus()[static_cast<size_t>(pu)].core)] == 0) ++idle_cores_;
    }
    for (int g : slot.gpus) {
      busy_gpus_[static_cast<size_t>(g)] = false;
      ++free_gpus_;
    }
  }
  return Status::Ok();
}

}  // namespace scimesh::launcher

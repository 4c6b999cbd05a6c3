// The wording of "no offer can take this step".
#include "protocol/wire/offer_fit.h"

#include <algorithm>

namespace scimesh {
namespace {

std::string Plural(int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// "8 cpus", "8 cpus and 2 gpus": what each node must have free.
std::string PerNode(int64_t cpus, int64_t gpus) {
  std::string s = Plural(cpus, "cpu", "cpus");
  if (gpus > 0) s += " and " + Plural(gpus, "gpu", "gpus");
  return s;
}

}  // namespace

std::optional<std::string> WhyNoOfferFits(const Resources& r, int64_t walltime_s,
                                          const std::vector<FreeCapacity>& offers) {
  if (offers.empty()) return std::nullopt;
  const int64_t cpus = r.ranks_per_node * r.cpus_per_rank;
  const int64_t gpus = r.ranks_per_node * r.gpus_per_rank;
  int64_t most_nodes = 0, most_fitting = 0, most_walltime = 0;
  for (const FreeCapacity& offer : offers) {
    const int64_t fitting = std::count_if(offer.nodes.begin(), offer.nodes.end(),
                                          [&](const FreeNode& n) { return n.cpus >= cpus && n.gpus >= gpus; });
    if (fitting >= r.nodes && walltime_s <= offer.walltime_s) return std::nullopt;
    most_nodes = std::max(most_nodes, static_cast<int64_t>(offer.nodes.size()));
    most_fitting = std::max(most_fitting, fitting);
    most_walltime = std::max(most_walltime, offer.walltime_s);
  }
  std::string why;
  if (most_fitting < r.nodes) {
    if (most_nodes < r.nodes) {
      why = "needs " + Plural(r.nodes, "node", "nodes") + ", largest offer " + std::to_string(most_nodes);
    } else {
      why = "needs " + Plural(r.nodes, "node", "nodes") + " with " + PerNode(cpus, gpus) +
            " each, largest offer " + Plural(most_fitting, "such node", "such nodes");
    }
  }
  if (walltime_s > most_walltime) {
    if (!why.empty()) why += "; ";
    why += "needs " + std::to_string(walltime_s) + " s of walltime, largest offer " + std::to_string(most_walltime) +
           " s";
  }
  if (why.empty()) {
    why = "needs " + Plural(r.nodes, "node", "nodes") + " with " + PerNode(cpus, gpus) + " each for " +
          std::to_string(walltime_s) + " s, and no single offer has both";
  }
  return why;
}

}  // namespace scimesh

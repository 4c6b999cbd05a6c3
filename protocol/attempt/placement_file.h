// placement.json: the cores, GPUs and NUMA nodes the launcher assigned to each
// rank of a step. Written by the launcher, read by every rank (scimesh-rank,
// the MPI runtime) to pin itself.
//
// {"ranks":[{"rank":0,"node":"n1","cpus":[0,1],"gpus":[],"numa":[0]}, ...]}
//
// Plain values and free functions; thread-safe.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/util/status.h"

namespace scimesh {

struct PlacementFile {
  struct Rank {
    int rank = 0;
    std::string node;
    std::vector<unsigned> cpus;  // OS indices of the PUs (hwloc os_index)
    std::vector<int> gpus;       // device indices on the node
    std::vector<int> numa;       // OS indices of the NUMA nodes local to the cpus
  };
  std::vector<Rank> ranks;

  // Rank `rank`'s entry; nullptr when the file has none.
  const Rank* Find(int rank) const;
};

std::string SerializePlacementFile(const PlacementFile& file);
// Depth-limited; every entry needs an integer rank; cpus unsigned, gpus >= 0.
Result<PlacementFile> ParsePlacementFile(std::string_view json);
// Reads placement.json of `dir_fd` with the safe reader; nullopt when absent.
Result<std::optional<PlacementFile>> ReadPlacementFileAt(int dir_fd, uid_t owner);

}  // namespace scimesh

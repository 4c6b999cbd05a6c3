// RankAssignment: the cores and GPUs the launcher assigned to one rank, read
// from the attempt directory's placement.json, and the rank's identity from
// the launcher's environment (srun or mpirun).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/util/status.h"

namespace scimesh::mpi {

struct RankAssignment {
  int rank = 0;
  std::string node;
  std::vector<unsigned> cpus;  // OS indices of the PUs (hwloc os_index)
  std::vector<int> gpus;       // device indices on the node
};

// Parses placement.json text: {"ranks":[{"rank":0,"node":"n1","cpus":[0,1],"gpus":[]},...]}
// and returns rank `rank`'s entry, or std::nullopt when the file has none.
Result<std::optional<RankAssignment>> ParseRankAssignment(std::string_view placement_json, int rank);

// Reads <attempt_dir>/placement.json; std::nullopt when the file does not exist.
Result<std::optional<RankAssignment>> ReadRankAssignment(const std::string& attempt_dir, int rank);

// This process's global rank from the launcher's environment (SLURM_PROCID,
// OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK), before or without MPI_Init.
std::optional<int> GlobalRankFromEnv();

}  // namespace scimesh::mpi

// Reading a rank's assigned cores and GPUs, and its rank from the environment.
#include "mpi/rank_assignment.h"

#include <unistd.h>

#include <cstdlib>

#include "protocol/attempt/attempt_files.h"
#include "protocol/attempt/placement_file.h"

namespace scimesh::mpi {

namespace {

std::optional<RankAssignment> AssignmentOf(const PlacementFile& file, int rank) {
  const PlacementFile::Rank* r = file.Find(rank);
  if (r == nullptr) return std::nullopt;
  return RankAssignment{rank, r->node, r->cpus, r->gpus};
}

}  // namespace

Result<std::optional<RankAssignment>> ParseRankAssignment(std::string_view text, int rank) {
  SCIMESH_ASSIGN_OR_RETURN(PlacementFile file, ParsePlacementFile(text));
  return AssignmentOf(file, rank);
}

Result<std::optional<RankAssignment>> ReadRankAssignment(const std::string& attempt_dir, int rank) {
  SCIMESH_ASSIGN_OR_RETURN(UniqueFd dir, OpenPrivateDirectory(attempt_dir, ::geteuid(), "attempt directory"));
  SCIMESH_ASSIGN_OR_RETURN(auto file, ReadPlacementFileAt(dir.get(), ::geteuid()));
  if (!file) return std::optional<RankAssignment>();
  return AssignmentOf(*file, rank);
}

std::optional<int> GlobalRankFromEnv() {
  for (const char* name : {"SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') continue;
    char* end = nullptr;
    long r = std::strtol(v, &end, 10);
    if (*end == '\0' && r >= 0 && r < (1L << 30)) return static_cast<int>(r);
  }
  return std::nullopt;
}

}  // namespace scimesh::mpi

// RankEnvironment: what a rank's program is told about the PUs and GPUs it
// was placed on -- OpenMP's thread count and places, and which GPUs it sees.
// Shared by scimesh-rank (which sets it in itself before exec) and the
// launcher (which gives it to the single-rank steps it starts without
// scimesh-rank).
#pragma once

#include <string>
#include <vector>

namespace scimesh {

struct RankVariable {
  std::string name;
  std::string value;
  // False: a value the user set (in the step's env or the environment the
  // program inherits) wins over this one.
  bool overrides = false;
};

// OMP_NUM_THREADS (the PU count, 1 when none), OMP_PLACES ("{0},{1}", only
// with PUs) and OMP_PROC_BIND=close, which a user's own setting overrides;
// CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES and ZE_AFFINITY_MASK ("0,1", ""
// for none), which are the launcher's decision and override it.
std::vector<RankVariable> RankEnvironment(const std::vector<int>& cpus, const std::vector<int>& gpus);

}  // namespace scimesh

// The environment a rank's threads and GPUs need.
#include "protocol/attempt/rank_environment.h"

namespace scimesh {
namespace {

std::string Join(const std::vector<int>& v, const char* before, const char* after) {
  std::string out;
  for (int x : v) {
    if (!out.empty()) out += ',';
    out += before + std::to_string(x) + after;
  }
  return out;
}

}  // namespace

std::vector<RankVariable> RankEnvironment(const std::vector<int>& cpus, const std::vector<int>& gpus) {
  std::vector<RankVariable> out;
  out.push_back({"OMP_NUM_THREADS", std::to_string(cpus.empty() ? 1 : cpus.size()), false});
  if (!cpus.empty()) out.push_back({"OMP_PLACES", Join(cpus, "{", "}"), false});
  out.push_back({"OMP_PROC_BIND", "close", false});
  // GPU visibility is the launcher's decision: a rank sees exactly its GPUs.
  const std::string visible = Join(gpus, "", "");
  for (const char* name : {"CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "ZE_AFFINITY_MASK"}) {
    out.push_back({name, visible, true});
  }
  return out;
}

}  // namespace scimesh

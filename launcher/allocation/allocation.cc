// Allocation discovery: SLURM's environment, squeue for the end time, and the
// node specs the placer starts from.
#include "launcher/allocation/allocation.h"

#include <algorithm>
#include <cstdlib>

#include "launcher/allocation/command_output.h"
#include "protocol/util/index_list.h"
#include "launcher/allocation/slurm_env.h"

namespace scimesh::launcher {
namespace {

std::optional<std::string> First(const Environment& env, std::initializer_list<std::string_view> names) {
  for (std::string_view name : names) {
    auto v = env(name);
    if (v.has_value() && !v->empty()) return v;
  }
  return std::nullopt;
}

Status Bad(std::string_view variable, const Status& cause) {
  return Status::InvalidArgument(std::string(variable) + ": " + cause.message());
}

}  // namespace

Environment ProcessEnvironment() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* v = std::getenv(std::string(name).c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

Result<Allocation> AllocationFromEnvironment(const Environment& env, const AllocationOptions& options) {
  Allocation a;
  if (options.walltime.has_value()) {
    if (options.walltime->count() < 0) return Status::InvalidArgument("--walltime must not be negative");
    a.end = options.now + *options.walltime;
  }
  auto job_id = First(env, {"SLURM_JOB_ID", "SLURM_JOBID"});
  if (!job_id.has_value()) {
    if (options.hostname.empty()) return Status::InvalidArgument("outside SLURM the host name is needed");
    a.this_node = options.hostname;
    a.nodes.push_back({options.hostname, -1, -1});
    return a;
  }
  a.under_slurm = true;
  a.job_id = *job_id;
  if (!ParseInteger(a.job_id, 1, 4294967295LL).ok()) {
    return Status::InvalidArgument("SLURM_JOB_ID: '" + a.job_id + "' is not a job id");
  }
  auto list = First(env, {"SLURM_JOB_NODELIST", "SLURM_NODELIST"});
  if (!list.has_value()) return Status::InvalidArgument("SLURM_JOB_ID is set but SLURM_JOB_NODELIST is not");
  auto names = ExpandHostList(*list);
  if (!names.ok()) return Bad("SLURM_JOB_NODELIST", names.status());
  std::vector<int> cpus(names->size(), -1);
  if (auto text = First(env, {"SLURM_JOB_CPUS_PER_NODE"}); text.has_value()) {
    auto expanded = ExpandCpusPerNode(*text, names->size());
    if (!expanded.ok()) return Bad("SLURM_JOB_CPUS_PER_NODE", expanded.status());
    cpus = *expanded;
  }
  a.this_node = First(env, {"SLURMD_NODENAME"}).value_or(options.hostname);
  if (std::find(names->begin(), names->end(), a.this_node) == names->end()) {
    return Status::InvalidArgument("this node '" + a.this_node + "' is not in SLURM_JOB_NODELIST '" + *list + "'");
  }

  // GPUs: SLURM tells this node's exactly; for the others only a per-node
  // request, or nothing (then they are taken to be like this node).
  int here_gpus = 0;
  if (auto ids = First(env, {"SLURM_JOB_GPUS"}); ids.has_value()) {
    auto parsed = ParseIndexList(*ids, 65535);
    if (!parsed.ok()) return Bad("SLURM_JOB_GPUS", parsed.status());
    a.this_node_gpu_ids = *parsed;
    here_gpus = static_cast<int>(parsed->size());
  } else if (auto count = First(env, {"SLURM_GPUS_ON_NODE"}); count.has_value()) {
    auto n = ParseGpuCount(*count);
    if (!n.ok()) return Bad("SLURM_GPUS_ON_NODE", n.status());
    here_gpus = *n;
  }
  int other_gpus = here_gpus;
  if (auto per_node = First(env, {"SLURM_GPUS_PER_NODE"}); per_node.has_value()) {
    auto n = ParseGpuCount(*per_node);
    if (!n.ok()) return Bad("SLURM_GPUS_PER_NODE", n.status());
    other_gpus = *n;
  }
  for (size_t i = 0; i < names->size(); ++i) {
    const bool here = (*names)[i] == a.this_node;
    a.nodes.push_back({(*names)[i], cpus[i], here ? here_gpus : other_gpus});
  }
  return a;
}

Result<std::chrono::system_clock::time_point> QuerySlurmJobEnd(std::string_view job_id,
                                                               std::chrono::milliseconds timeout,
                                                               const std::string& squeue) {
  auto out = CommandOutput({squeue, "-h", "-j", std::string(job_id), "-o", "%e"}, timeout);
  if (!out.ok()) return out.status().WithContext("job end time");
  std::string text = *out;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.empty()) return Status::NotFound("job end time: squeue does not know job " + std::string(job_id));
  auto end = ParseSlurmTime(text);
  if (!end.ok()) return end.status().WithContext("job end time");
  return *end;
}

std::optional<std::chrono::seconds> TimeLeft(const Allocation& allocation, std::chrono::system_clock::time_point now) {
  if (!allocation.end.has_value()) return std::nullopt;
  return std::max(std::chrono::seconds(0), std::chrono::duration_cast<std::chrono::seconds>(*allocation.end - now));
}

std::vector<NodeSpec> NodeSpecsFor(const Allocation& allocation, std::shared_ptr<const Topology> local,
                                   const std::map<std::string, std::shared_ptr<const Topology>>& probed) {
  std::vector<NodeSpec> specs;
  for (const AllocatedNode& node : allocation.nodes) {
    NodeSpec spec;
    spec.name = node.name;
    spec.cpus = node.cpus;
    spec.gpus = node.gpus;
    if (node.name == allocation.this_node) {
      spec.topology = local;
      spec.gpu_indices = allocation.this_node_gpu_ids;
      // Under a device cgroup hwloc may see only the job's GPUs, renumbered
      // from 0; SLURM's ids then name GPUs hwloc does not list.
      if (spec.gpu_indices.has_value() && local != nullptr) {
        const auto& ids = *spec.gpu_indices;
        const bool all_listed = std::all_of(ids.begin(), ids.end(), [&](int id) {
          return static_cast<size_t>(id) < local->gpus().size();
        });
        if (!all_listed) spec.gpu_indices.reset();
      }
    } else if (auto it = probed.find(node.name); it != probed.end() && it->second != nullptr) {
      spec.topology = it->second;
    } else {
      spec.topology = local;
      spec.use_allowed_set = false;
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

}  // namespace scimesh::launcher

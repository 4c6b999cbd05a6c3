// The allocation the launcher fills: its nodes, cpus and GPUs per node, and
// when it ends; from SLURM's environment, or this host alone outside SLURM.
//
// Functions here are thread-safe; they read the environment only through the
// Environment they are given.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "launcher/placement/placement.h"
#include "launcher/placement/topology.h"
#include "protocol/util/status.h"

namespace scimesh::launcher {

struct AllocatedNode {
  std::string name;
  int cpus = -1;  // SLURM_JOB_CPUS_PER_NODE for it; -1: whatever its topology allows
  int gpus = -1;  // GPUs SLURM gives it; -1: every GPU its topology has (outside SLURM)
};

struct Allocation {
  bool under_slurm = false;
  std::string job_id;               // SLURM_JOB_ID; empty outside SLURM
  std::string this_node;            // where the launcher runs: SLURMD_NODENAME or the host name
  std::vector<AllocatedNode> nodes; // SLURM's order (srun numbers ranks in it)
  std::optional<std::vector<int>> this_node_gpu_ids;  // SLURM_JOB_GPUS, when set
  // When the allocation ends; empty when unknown or unlimited.
  std::optional<std::chrono::system_clock::time_point> end;
};

// Looks up one environment variable; std::nullopt when unset.
using Environment = std::function<std::optional<std::string>(std::string_view name)>;

// The process environment (getenv).
Environment ProcessEnvironment();

struct AllocationOptions {
  std::string hostname;  // this host's name outside SLURM and when SLURMD_NODENAME is unset
  // --walltime: the allocation ends this long after `now`, under SLURM too
  // (it overrides, and saves, the squeue query).
  std::optional<std::chrono::seconds> walltime;
  std::chrono::system_clock::time_point now = std::chrono::system_clock::now();
};

// Reads SLURM_JOB_ID, SLURM_JOB_NODELIST, SLURM_JOB_CPUS_PER_NODE,
// SLURMD_NODENAME, SLURM_JOB_GPUS, SLURM_GPUS_ON_NODE and SLURM_GPUS_PER_NODE
// (older spellings SLURM_JOBID, SLURM_NODELIST too). Without SLURM_JOB_ID:
// this host alone. Under SLURM, `end` is left empty unless options.walltime
// is given: QuerySlurmJobEnd fills it. GPUs: this node gets SLURM_JOB_GPUS
// (or the SLURM_GPUS_ON_NODE count); other nodes SLURM_GPUS_PER_NODE, else
// the same count as this node, else none. Fails with InvalidArgument naming
// the variable when one is malformed or they disagree.
Result<Allocation> AllocationFromEnvironment(const Environment& env, const AllocationOptions& options);

// The job's end time from `squeue -h -j <job_id> -o %e` (one controller RPC
// and one process, about 10-30 ms; see docs/placement.md for why not
// libslurm). `squeue` is the program to run (a test passes a fake).
Result<std::chrono::system_clock::time_point> QuerySlurmJobEnd(std::string_view job_id,
                                                               std::chrono::milliseconds timeout,
                                                               const std::string& squeue = "squeue");

// Time left until allocation.end, at least zero; empty when there is no end.
std::optional<std::chrono::seconds> TimeLeft(const Allocation& allocation, std::chrono::system_clock::time_point now);

// One NodeSpec per allocated node, for Placer::Create. This node uses
// `local` (its allowed cpuset is this process's). Another node uses its
// entry in `probed` (hwloc XML taken on that node) when there is one, and
// otherwise `local` by the homogeneous assumption: every PU of it, limited
// to the node's SLURM cpu count, since its allowed cpuset is unknown here.
std::vector<NodeSpec> NodeSpecsFor(const Allocation& allocation, std::shared_ptr<const Topology> local,
                                   const std::map<std::string, std::shared_ptr<const Topology>>& probed = {});

}  // namespace scimesh::launcher

// A node's hardware as placement sees it: cores, hyperthreads, NUMA locality,
// the allowed cpuset, CPU kinds and GPUs, read once from hwloc.
//
// A Topology is immutable after loading: share it as shared_ptr<const
// Topology>; every method is safe to call from any number of threads.
// Loading fails with a Status (never throws) naming the source, not a path.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/util/status.h"

struct hwloc_topology;

namespace scimesh::launcher {

// One hardware thread (hwloc PU).
struct Pu {
  int os_index = 0;      // the number the OS, taskset and SLURM use
  int core = 0;          // index into Topology::cores()
  int kind = 0;          // CPU kind rank: higher is more performant; 0 when unknown
  bool allowed = false;  // inside the allowed cpuset (cgroup, or the XML's allowed set)
};

// One physical core. Cores are in hwloc logical order (siblings in the tree
// are neighbours), which is what "compact" means below.
struct Core {
  std::vector<int> pus;   // indices into Topology::pus(): best kind first, then logical order
  std::vector<int> numa;  // OS indices of the NUMA nodes local to this core
  int package = -1;       // logical index of the package, -1 when hwloc reports none
};

// One GPU: a PCI device with a compute OS device (CUDA, NVML, OpenCL GPU,
// RSMI, Level Zero), or a DRM device ("card", "renderD") of PCI class 3D
// controller (0x0302) or display controller (0x0380). A VGA-class device that
// only has a DRM node (a server's management graphics chip) is not a GPU.
struct Gpu {
  int index = 0;                 // ordinal on the node in PCI bus order (NVML order,
                                 // CUDA_DEVICE_ORDER=PCI_BUS_ID)
  std::string name;              // hwloc's OS device name: "nvml3", "cuda0", "card1"
  std::string pci_busid;         // "0000:34:00.0"
  std::string model;             // "Tesla V100-SXM3-32GB-H" when hwloc reports it
  std::vector<int> local_cores;  // cores of the GPU's nearest non-I/O object (package, NUMA)
};

// A set of cores sharing a level of the hierarchy (machine, package, NUMA
// group, cache, core). Levels whose cores equal their only child's are
// collapsed. domains()[0] is the machine; leaves are single cores.
struct Domain {
  std::string label;          // "Package L#1", "L3Cache L#4", "Core L#17"
  std::vector<int> cores;     // sorted indices into cores()
  std::vector<int> children;  // indices into domains(); empty for a leaf
  std::vector<int> gpus;      // indices into gpus() local to these cores (all, for the root)
};

class Topology {
 public:
  // This machine, as this process sees it: the allowed cpuset is the
  // process's (so a SLURM batch step sees the job's cpus on this node).
  static Result<std::shared_ptr<const Topology>> LoadThisMachine();
  // An hwloc 2.x XML export (lstopo --of xml, hwloc_topology_export_xml).
  static Result<std::shared_ptr<const Topology>> FromXmlFile(const std::string& path);
  static Result<std::shared_ptr<const Topology>> FromXmlBuffer(std::string_view xml);
  // An hwloc synthetic description, e.g. "pack:2 numa:2 core:4 pu:2".
  static Result<std::shared_ptr<const Topology>> FromSynthetic(std::string_view description);
  // The launcher's --topology: empty is this machine, "synthetic:<description>"
  // a synthetic one, anything else an XML file.
  static Result<std::shared_ptr<const Topology>> FromSource(std::string_view source);

  ~Topology();
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;

  // The topology as hwloc XML, for FromXmlBuffer on another host.
  Result<std::string> ExportXml() const;

  const std::vector<Pu>& pus() const { return pus_; }
  const std::vector<Core>& cores() const { return cores_; }
  const std::vector<Gpu>& gpus() const { return gpus_; }
  const std::vector<Domain>& domains() const { return domains_; }
  // Domains from the root to the leaf of core `core`.
  const std::vector<int>& CorePath(int core) const { return core_paths_[static_cast<size_t>(core)]; }
  int kind_count() const { return kind_count_; }
  int allowed_pu_count() const;
  // This machine as the kernel reports it, not an XML or synthetic
  // description: its PU indices are the ones a process can be bound to.
  bool this_system() const;

  // "2 packages, 4 NUMA nodes, 16 cores, 32 PUs (30 allowed), 2 GPUs, 1 CPU kind"
  std::string Summary() const;

 private:
  class Builder;
  explicit Topology(hwloc_topology* handle);
  // Takes ownership of a loaded hwloc topology and reads the model from it.
  static std::shared_ptr<const Topology> Adopt(hwloc_topology* handle);

  hwloc_topology* handle_;
  mutable std::mutex export_mutex_;  // hwloc does not promise concurrent export
  std::vector<Pu> pus_;
  std::vector<Core> cores_;
  std::vector<Gpu> gpus_;
  std::vector<Domain> domains_;
  std::vector<std::vector<int>> core_paths_;
  int kind_count_ = 1;
  int package_count_ = 0;
  int numa_count_ = 0;
};

}  // namespace scimesh::launcher

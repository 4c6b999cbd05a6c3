// Test helpers: the real topologies in ../shared, synthetic ones with a
// restricted cpuset or CPU kinds, a small GPU machine as XML, and raw hwloc
// for checking placements independently of the code under test.
#pragma once

#include <hwloc.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "launcher/placement/topology.h"

namespace scimesh::launcher::testing {

// The directory of the real topologies (the build's ../shared/topologies, or
// $SCIMESH_TOPOLOGY_DIR), and whether it exists here.
std::string TopologyDir();
bool HaveTopologyDir();

// Loads `file` from TopologyDir(); fails the test on error.
std::shared_ptr<const Topology> RealTopology(const std::string& file);

// Loads a synthetic description; fails the test on error.
std::shared_ptr<const Topology> Synthetic(const std::string& description);

// XML of a synthetic topology whose allowed cpuset is `allowed` (OS indices)
// and whose PUs are split into CPU kinds: kinds[i] = OS indices of kind i,
// least performant first. Empty vectors leave that aspect alone.
std::string SyntheticXml(const std::string& description, const std::vector<int>& allowed,
                         const std::vector<std::vector<int>>& kinds = {});

// A machine with `packages` packages, each one NUMA node of `cores` cores
// with `pus` PUs, PU OS indices in order. gpu_packages lists, per GPU, the
// package it hangs off (an NVML GPU of class 3D controller); with_vga adds a
// management VGA chip (only a "card" node) on package 0.
std::string GpuMachineXml(int packages, int cores, int pus, const std::vector<int>& gpu_packages, bool with_vga);

// Raw hwloc, loaded the way Topology loads it, for independent checks.
class RawHwloc {
 public:
  explicit RawHwloc(const std::string& xml_path_or_text, bool is_text = false);
  ~RawHwloc();
  RawHwloc(const RawHwloc&) = delete;
  RawHwloc& operator=(const RawHwloc&) = delete;
  hwloc_topology_t get() const { return h_; }

  bool Allowed(int os) const;
  bool Online(int os) const;
  // OS indices of the PUs on the same core as PU `os`, itself included.
  std::vector<int> CoreOf(int os) const;
  // OS indices of the NUMA nodes whose cpuset holds every one of `pus`.
  std::vector<int> NumaHolding(const std::vector<int>& pus) const;
  // OS index of the package holding PU `os`.
  int PackageOf(int os) const;
  // Cpuset (OS indices) of the nearest non-I/O ancestor of the OS device `name`.
  std::vector<int> LocalityOf(const std::string& osdev_name) const;
  // OS indices of the PUs in the most performant CPU kind (empty when one kind).
  std::vector<int> BestKind() const;

 private:
  hwloc_topology_t h_ = nullptr;
};

// OS indices in a bitmap.
std::vector<int> Indices(hwloc_const_bitmap_t set);

}  // namespace scimesh::launcher::testing

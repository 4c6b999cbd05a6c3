// Test helpers for topologies: files, synthetic variants, raw hwloc checks.
#include "tests/launcher/topology_test_util.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>

namespace scimesh::launcher::testing {

// SCIMESH_TOPOLOGY_DIR in the environment overrides the build's default.
std::string TopologyDir() {
  const char* dir = std::getenv("SCIMESH_TOPOLOGY_DIR");
  return dir != nullptr && *dir != '\0' ? dir : SCIMESH_TOPOLOGY_DIR;
}

bool HaveTopologyDir() {
  struct stat st {};
  return stat(TopologyDir().c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::shared_ptr<const Topology> RealTopology(const std::string& file) {
  auto t = Topology::FromXmlFile(TopologyDir() + "/" + file);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : nullptr;
}

std::shared_ptr<const Topology> Synthetic(const std::string& description) {
  auto t = Topology::FromSynthetic(description);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : nullptr;
}

std::vector<int> Indices(hwloc_const_bitmap_t set) {
  std::vector<int> out;
  unsigned i;
  hwloc_bitmap_foreach_begin(i, set) out.push_back(static_cast<int>(i));
  hwloc_bitmap_foreach_end();
  return out;
}

std::string SyntheticXml(const std::string& description, const std::vector<int>& allowed,
                         const std::vector<std::vector<int>>& kinds) {
  hwloc_topology_t h;
  hwloc_topology_init(&h);
  hwloc_topology_set_flags(h, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
  EXPECT_EQ(hwloc_topology_set_synthetic(h, description.c_str()), 0);
  EXPECT_EQ(hwloc_topology_load(h), 0);
  if (!allowed.empty()) {
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    for (int os : allowed) hwloc_bitmap_set(set, static_cast<unsigned>(os));
    EXPECT_EQ(hwloc_topology_allow(h, set, nullptr, HWLOC_ALLOW_FLAG_CUSTOM), 0);
    hwloc_bitmap_free(set);
  }
  for (size_t k = 0; k < kinds.size(); ++k) {
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    for (int os : kinds[k]) hwloc_bitmap_set(set, static_cast<unsigned>(os));
    EXPECT_EQ(hwloc_cpukinds_register(h, set, static_cast<int>(k), 0, nullptr, 0), 0);
    hwloc_bitmap_free(set);
  }
  char* buffer = nullptr;
  int length = 0;
  EXPECT_EQ(hwloc_topology_export_xmlbuffer(h, &buffer, &length, 0), 0);
  std::string xml(buffer, static_cast<size_t>(length > 0 ? length - 1 : 0));
  hwloc_free_xmlbuffer(h, buffer);
  hwloc_topology_destroy(h);
  return xml;
}

namespace {

std::string Mask(int first, int count) {
  unsigned long long m = 0;
  for (int i = first; i < first + count; ++i) m |= 1ULL << i;
  char buf[32];
  (void)std::snprintf(buf, sizeof(buf), "0x%08llx", m);  // at most 18 characters
  return buf;
}

}  // namespace

std::string GpuMachineXml(int packages, int cores, int pus, const std::vector<int>& gpu_packages, bool with_vga) {
  int gp = 1;
  // `numa` is the NUMA node set: package p holds NUMA node p.
  auto obj = [&](const std::string& type, int os, int first, int count, const std::string& numa) {
    const std::string m = Mask(first, count);
    return "<object type=\"" + type + "\" os_index=\"" + std::to_string(os) + "\" cpuset=\"" + m +
           "\" complete_cpuset=\"" + m + "\" nodeset=\"" + numa + "\" complete_nodeset=\"" + numa +
           "\" gp_index=\"" + std::to_string(gp++) + "\"";
  };
  const int per_package = cores * pus;
  std::string xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
                    "<topology version=\"2.0\">\n";
  xml += obj("Machine", 0, 0, packages * per_package, Mask(0, packages)) + ">\n";
  for (int p = 0; p < packages; ++p) {
    const std::string numa = Mask(p, 1);
    xml += obj("Package", p, p * per_package, per_package, numa) + ">\n";
    xml += obj("NUMANode", p, p * per_package, per_package, numa) + " local_memory=\"1073741824\"/>\n";
    for (int c = 0; c < cores; ++c) {
      const int first = p * per_package + c * pus;
      xml += obj("Core", p * cores + c, first, pus, numa) + ">\n";
      for (int t = 0; t < pus; ++t) xml += obj("PU", first + t, first + t, 1, numa) + "/>\n";
      xml += "</object>\n";
    }
    if (p == 0 && with_vga) {
      const int pci = gp++, os = gp++;
      xml += "<object type=\"PCIDev\" gp_index=\"" + std::to_string(pci) +
             "\" pci_busid=\"0000:03:00.0\" pci_type=\"0300 [1002:515e] [0014:0019] 02\" pci_link_speed=\"0\">\n"
             "<object type=\"OSDev\" gp_index=\"" + std::to_string(os) + "\" name=\"card0\" osdev_type=\"1\"/>\n"
             "</object>\n";
    }
    for (size_t g = 0; g < gpu_packages.size(); ++g) {
      if (gpu_packages[g] != p) continue;
      char busid[32];
      (void)std::snprintf(busid, sizeof(busid), "0000:%02zx:00.0", 0x10 + g);  // at most 26 characters
      const int pci = gp++, os = gp++;
      xml += "<object type=\"PCIDev\" gp_index=\"" + std::to_string(pci) + "\" pci_busid=\"" + busid +
             "\" pci_type=\"0302 [10de:1db8] [10de:131d] a1\" pci_link_speed=\"0\">\n"
             "<object type=\"OSDev\" gp_index=\"" + std::to_string(os) + "\" name=\"nvml" + std::to_string(g) +
             "\" subtype=\"NVML\" osdev_type=\"1\"/>\n</object>\n";
    }
    xml += "</object>\n";
  }
  xml += "</object>\n</topology>\n";
  return xml;
}

RawHwloc::RawHwloc(const std::string& source, bool is_text) {
  hwloc_topology_init(&h_);
  hwloc_topology_set_flags(h_, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
  hwloc_topology_set_io_types_filter(h_, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  const int rc = is_text ? hwloc_topology_set_xmlbuffer(h_, source.c_str(), static_cast<int>(source.size()) + 1)
                         : hwloc_topology_set_xml(h_, source.c_str());
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(hwloc_topology_load(h_), 0);
}

RawHwloc::~RawHwloc() { hwloc_topology_destroy(h_); }

bool RawHwloc::Allowed(int os) const {
  return hwloc_bitmap_isset(hwloc_topology_get_allowed_cpuset(h_), static_cast<unsigned>(os)) != 0;
}

bool RawHwloc::Online(int os) const {
  return hwloc_bitmap_isset(hwloc_topology_get_topology_cpuset(h_), static_cast<unsigned>(os)) != 0;
}

std::vector<int> RawHwloc::CoreOf(int os) const {
  hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(h_, static_cast<unsigned>(os));
  if (pu == nullptr) return {};
  hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(h_, HWLOC_OBJ_CORE, pu);
  return Indices(core != nullptr ? core->cpuset : pu->cpuset);
}

std::vector<int> RawHwloc::NumaHolding(const std::vector<int>& pus) const {
  std::vector<int> out;
  for (hwloc_obj_t n = nullptr; (n = hwloc_get_next_obj_by_type(h_, HWLOC_OBJ_NUMANODE, n));) {
    bool all = !pus.empty();
    for (int os : pus) all = all && hwloc_bitmap_isset(n->cpuset, static_cast<unsigned>(os));
    if (all) out.push_back(static_cast<int>(n->os_index));
  }
  return out;
}

int RawHwloc::PackageOf(int os) const {
  hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(h_, static_cast<unsigned>(os));
  hwloc_obj_t pkg = pu != nullptr ? hwloc_get_ancestor_obj_by_type(h_, HWLOC_OBJ_PACKAGE, pu) : nullptr;
  return pkg != nullptr ? static_cast<int>(pkg->os_index) : -1;
}

std::vector<int> RawHwloc::LocalityOf(const std::string& name) const {
  for (hwloc_obj_t os = nullptr; (os = hwloc_get_next_osdev(h_, os));) {
    if (os->name != nullptr && name == os->name) return Indices(hwloc_get_non_io_ancestor_obj(h_, os)->cpuset);
  }
  return {};
}

std::vector<int> RawHwloc::BestKind() const {
  const int nr = hwloc_cpukinds_get_nr(h_, 0);
  if (nr <= 1) return {};
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  int best = -1;
  std::vector<int> out;
  for (int i = 0; i < nr; ++i) {
    int efficiency = -1;
    hwloc_cpukinds_get_info(h_, static_cast<unsigned>(i), set, &efficiency, nullptr, nullptr, 0);
    if (efficiency > best) {
      best = efficiency;
      out = Indices(set);
    }
  }
  hwloc_bitmap_free(set);
  return out;
}

}  // namespace scimesh::launcher::testing

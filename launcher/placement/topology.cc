// Loading a node's hardware model from hwloc (this machine, XML, synthetic).
#include "launcher/placement/topology.h"

#include <hwloc.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

#include "protocol/util/log.h"

namespace scimesh::launcher {
namespace {

// Frees an hwloc bitmap when it goes out of scope.
struct Bitmap {
  Bitmap() : set(hwloc_bitmap_alloc()) {}
  ~Bitmap() { hwloc_bitmap_free(set); }
  Bitmap(const Bitmap&) = delete;
  Bitmap& operator=(const Bitmap&) = delete;
  hwloc_bitmap_t set;
};

std::string ErrnoText(std::string_view what) {
  return std::string(what) + ": " + std::strerror(errno);
}

// Where a topology comes from; `arg` is a path, XML text or a description.
enum class Source { kThisMachine, kXmlFile, kXmlBuffer, kSynthetic };

Result<hwloc_topology_t> Open(Source source, std::string_view arg) {
  // hwloc may read the text during load, so it outlives the load call.
  const std::string text(arg);
  hwloc_topology_t h = nullptr;
  if (hwloc_topology_init(&h) != 0) return Status::Internal(ErrnoText("hwloc: cannot initialise a topology"));
  // Keep disallowed PUs as objects, so the allowed cpuset (cgroup, SLURM)
  // is visible as a set and not as missing hardware.
  hwloc_topology_set_flags(h, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
  // GPUs are OS devices under PCI devices; hwloc drops all I/O by default.
  hwloc_topology_set_io_types_filter(h, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  int rc = 0;
  std::string what;
  switch (source) {
    case Source::kThisMachine:
      what = "this machine";
      break;
    case Source::kXmlFile:
      what = "XML file";
      rc = hwloc_topology_set_xml(h, text.c_str());
      break;
    case Source::kXmlBuffer:
      what = "XML buffer";
      // hwloc wants the length including the terminating NUL.
      rc = hwloc_topology_set_xmlbuffer(h, text.c_str(), static_cast<int>(text.size()) + 1);
      break;
    case Source::kSynthetic:
      what = "synthetic description '" + text + "'";
      rc = hwloc_topology_set_synthetic(h, text.c_str());
      break;
  }
  if (rc == 0) rc = hwloc_topology_load(h);
  if (rc != 0) {
    Status s = Status::InvalidArgument(ErrnoText("hwloc: cannot load topology from " + what));
    hwloc_topology_destroy(h);
    return s;
  }
  if (source == Source::kThisMachine && !hwloc_topology_is_thissystem(h)) {
    // HWLOC_XMLFILE / HWLOC_SYNTHETIC in the environment replaced the real
    // machine: placement follows that description and pinning is a no-op.
    log::For("topology")->warn(
        "hwloc loaded a topology that is not this machine (HWLOC_XMLFILE or HWLOC_SYNTHETIC is set): "
        "steps are placed by it and their ranks are not pinned");
  }
  return h;
}

std::string Label(hwloc_obj_t obj) {
  char type[64];
  hwloc_obj_type_snprintf(type, sizeof(type), obj, 0);
  return std::string(type) + " L#" + std::to_string(obj->logical_index);
}

// Ranks OS device names as GPU names: the first family found names the GPU.
int NamePriority(std::string_view name) {
  static constexpr std::string_view kFamilies[] = {"nvml", "cuda", "rsmi", "ze", "opencl", "card", "renderD"};
  for (size_t i = 0; i < std::size(kFamilies); ++i) {
    if (name.substr(0, kFamilies[i].size()) == kFamilies[i]) return static_cast<int>(i);
  }
  return -1;
}

bool IsComputeDevice(hwloc_obj_t osdev) {
  const std::string_view name = osdev->name != nullptr ? osdev->name : "";
  const int family = NamePriority(name);
  if (family < 0) return false;
  if (name.substr(0, 6) == "opencl") {
    // OpenCL also lists CPUs; keep GPUs and accelerators.
    const char* type = hwloc_obj_get_info_by_name(osdev, "OpenCLDeviceType");
    return type == nullptr || std::strcmp(type, "CPU") != 0;
  }
  if (name.substr(0, 4) == "card" || name.substr(0, 7) == "renderD") {
    // A DRM node alone proves only a display chip; 3D and display controllers
    // (0x0302, 0x0380) are how compute GPUs present themselves.
    const unsigned cls = osdev->parent->attr->pcidev.class_id;
    return cls == 0x0302 || cls == 0x0380;
  }
  return true;
}

}  // namespace

// Reads the hwloc tree into the Topology's plain vectors.
class Topology::Builder {
 public:
  explicit Builder(Topology& t) : t_(t), h_(t.handle_) {}

  void Build() {
    ReadPus();
    ReadKinds();
    OrderCorePus();
    ReadGpus();
    BuildDomain(hwloc_get_root_obj(h_));
    ReadPaths();
    t_.package_count_ = hwloc_get_nbobjs_by_type(h_, HWLOC_OBJ_PACKAGE);
    t_.numa_count_ = hwloc_get_nbobjs_by_type(h_, HWLOC_OBJ_NUMANODE);
  }

 private:
  void ReadPus() {
    hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset(h_);
    std::map<hwloc_obj_t, int> core_of;
    const int n = hwloc_get_nbobjs_by_type(h_, HWLOC_OBJ_PU);
    for (int i = 0; i < n; ++i) {
      hwloc_obj_t pu = hwloc_get_obj_by_type(h_, HWLOC_OBJ_PU, static_cast<unsigned>(i));
      // Without a Core level (some synthetic or exotic topologies) a PU is its own core.
      hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(h_, HWLOC_OBJ_CORE, pu);
      if (core == nullptr) core = pu;
      auto [it, added] = core_of.emplace(core, static_cast<int>(t_.cores_.size()));
      if (added) {
        Core c;
        hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(h_, HWLOC_OBJ_PACKAGE, pu);
        c.package = pkg != nullptr ? static_cast<int>(pkg->logical_index) : -1;
        for (hwloc_obj_t numa = nullptr; (numa = hwloc_get_next_obj_by_type(h_, HWLOC_OBJ_NUMANODE, numa));) {
          if (numa->cpuset != nullptr && hwloc_bitmap_intersects(numa->cpuset, core->cpuset)) {
            c.numa.push_back(static_cast<int>(numa->os_index));
          }
        }
        t_.cores_.push_back(std::move(c));
      }
      Pu p;
      p.os_index = static_cast<int>(pu->os_index);
      p.core = it->second;
      p.allowed = hwloc_bitmap_isset(allowed, pu->os_index) != 0;
      t_.cores_[static_cast<size_t>(p.core)].pus.push_back(static_cast<int>(t_.pus_.size()));
      t_.pus_.push_back(p);
    }
  }

  // Kind ranks follow hwloc's efficiency order (higher = more performant).
  // When hwloc cannot rank the kinds, every PU is one kind: no preference
  // is better than a guessed one.
  void ReadKinds() {
    const int nr = hwloc_cpukinds_get_nr(h_, 0);
    if (nr <= 1) return;
    std::vector<std::pair<int, Bitmap>> kinds(static_cast<size_t>(nr));
    for (int i = 0; i < nr; ++i) {
      int efficiency = -1;
      if (hwloc_cpukinds_get_info(h_, static_cast<unsigned>(i), kinds[static_cast<size_t>(i)].second.set, &efficiency,
                                  nullptr, nullptr, 0) != 0 ||
          efficiency < 0) {
        return;
      }
      kinds[static_cast<size_t>(i)].first = efficiency;
    }
    for (const auto& [efficiency, set] : kinds) {
      for (auto& pu : t_.pus_) {
        if (hwloc_bitmap_isset(set.set, static_cast<unsigned>(pu.os_index))) pu.kind = efficiency;
      }
    }
    t_.kind_count_ = nr;
  }

  void OrderCorePus() {
    for (auto& core : t_.cores_) {
      std::stable_sort(core.pus.begin(), core.pus.end(), [&](int a, int b) {
        return t_.pus_[static_cast<size_t>(a)].kind > t_.pus_[static_cast<size_t>(b)].kind;
      });
    }
  }

  std::vector<int> CoresOf(hwloc_const_cpuset_t set) const {
    std::set<int> cores;
    if (set == nullptr) return {};
    for (const auto& pu : t_.pus_) {
      if (hwloc_bitmap_isset(set, static_cast<unsigned>(pu.os_index))) cores.insert(pu.core);
    }
    return {cores.begin(), cores.end()};
  }

  void ReadGpus() {
    struct Candidate {
      hwloc_obj_t pci;
      hwloc_obj_t best;  // the OS device that names it
    };
    std::vector<Candidate> found;
    for (hwloc_obj_t os = nullptr; (os = hwloc_get_next_osdev(h_, os));) {
      if (os->name == nullptr || os->parent == nullptr || os->parent->type != HWLOC_OBJ_PCI_DEVICE) continue;
      if (!IsComputeDevice(os)) continue;
      auto it = std::find_if(found.begin(), found.end(), [&](const Candidate& c) { return c.pci == os->parent; });
      if (it == found.end()) {
        found.push_back({os->parent, os});
      } else if (NamePriority(os->name) < NamePriority(it->best->name)) {
        it->best = os;
      }
    }
    auto key = [](hwloc_obj_t pci) {
      const auto& a = pci->attr->pcidev;
      return std::tuple(a.domain, a.bus, a.dev, a.func);
    };
    std::sort(found.begin(), found.end(), [&](const Candidate& a, const Candidate& b) { return key(a.pci) < key(b.pci); });
    for (const auto& c : found) {
      Gpu g;
      g.index = static_cast<int>(t_.gpus_.size());
      g.name = c.best->name;
      const auto& a = c.pci->attr->pcidev;
      char busid[32];
      std::snprintf(busid, sizeof(busid), "%04x:%02x:%02x.%01x", static_cast<unsigned>(a.domain),
                    static_cast<unsigned>(a.bus), static_cast<unsigned>(a.dev), static_cast<unsigned>(a.func));
      g.pci_busid = busid;
      const char* model = hwloc_obj_get_info_by_name(c.best, "GPUModel");
      if (model == nullptr) model = hwloc_obj_get_info_by_name(c.pci, "PCIDevice");
      if (model != nullptr) g.model = model;
      hwloc_obj_t anchor = hwloc_get_non_io_ancestor_obj(h_, c.pci);
      g.local_cores = CoresOf(anchor != nullptr ? anchor->cpuset : nullptr);
      t_.gpus_.push_back(std::move(g));
    }
  }

  // Returns the domain index for `obj`, or -1 when it holds no core.
  int BuildDomain(hwloc_obj_t obj) {
    std::vector<int> cores = CoresOf(obj->cpuset);
    if (cores.empty()) return -1;
    std::vector<hwloc_obj_t> kids;
    if (obj->type != HWLOC_OBJ_CORE && obj->type != HWLOC_OBJ_PU) {
      for (hwloc_obj_t child = obj->first_child; child != nullptr; child = child->next_sibling) {
        if (!CoresOf(child->cpuset).empty()) kids.push_back(child);
      }
      // A level that adds nothing (Package + L3 with the same cores) collapses,
      // except at the root, which is always domain 0.
      if (kids.size() == 1 && obj->parent != nullptr && CoresOf(kids[0]->cpuset) == cores) {
        return BuildDomain(kids[0]);
      }
    }
    const int id = static_cast<int>(t_.domains_.size());
    Domain d;
    d.label = Label(obj);
    d.cores = cores;
    for (const auto& g : t_.gpus_) {
      const bool local = obj->parent == nullptr ||
                         std::find_first_of(g.local_cores.begin(), g.local_cores.end(), cores.begin(), cores.end()) !=
                             g.local_cores.end();
      if (local) d.gpus.push_back(g.index);
    }
    t_.domains_.push_back(std::move(d));
    for (hwloc_obj_t kid : kids) {
      const int child = BuildDomain(kid);
      if (child >= 0) t_.domains_[static_cast<size_t>(id)].children.push_back(child);
    }
    return id;
  }

  void ReadPaths() {
    t_.core_paths_.assign(t_.cores_.size(), {});
    std::vector<int> path;
    Walk(0, path);
  }

  void Walk(int domain, std::vector<int>& path) {
    path.push_back(domain);
    const Domain& d = t_.domains_[static_cast<size_t>(domain)];
    if (d.children.empty()) {
      for (int core : d.cores) t_.core_paths_[static_cast<size_t>(core)] = path;
    }
    for (int child : d.children) Walk(child, path);
    path.pop_back();
  }

  Topology& t_;
  hwloc_topology_t h_;
};

Topology::Topology(hwloc_topology* handle) : handle_(handle) {}

Topology::~Topology() { hwloc_topology_destroy(handle_); }

std::shared_ptr<const Topology> Topology::Adopt(hwloc_topology* handle) {
  std::shared_ptr<Topology> t(new Topology(handle));
  Builder(*t).Build();
  return t;
}

Result<std::shared_ptr<const Topology>> Topology::LoadThisMachine() {
  auto h = Open(Source::kThisMachine, "");
  if (!h.ok()) return h.status();
  return Adopt(*h);
}

Result<std::shared_ptr<const Topology>> Topology::FromXmlFile(const std::string& path) {
  auto h = Open(Source::kXmlFile, path);
  if (!h.ok()) return h.status();
  return Adopt(*h);
}

Result<std::shared_ptr<const Topology>> Topology::FromXmlBuffer(std::string_view xml) {
  auto h = Open(Source::kXmlBuffer, xml);
  if (!h.ok()) return h.status();
  return Adopt(*h);
}

Result<std::shared_ptr<const Topology>> Topology::FromSynthetic(std::string_view description) {
  auto h = Open(Source::kSynthetic, description);
  if (!h.ok()) return h.status();
  return Adopt(*h);
}

Result<std::shared_ptr<const Topology>> Topology::FromSource(std::string_view source) {
  constexpr std::string_view kSynthetic = "synthetic:";
  if (source.empty()) return LoadThisMachine();
  if (source.substr(0, kSynthetic.size()) == kSynthetic) return FromSynthetic(source.substr(kSynthetic.size()));
  return FromXmlFile(std::string(source));
}

Result<std::string> Topology::ExportXml() const {
  std::lock_guard<std::mutex> lock(export_mutex_);
  char* buffer = nullptr;
  int length = 0;
  if (hwloc_topology_export_xmlbuffer(handle_, &buffer, &length, 0) != 0) {
    return Status::Internal(ErrnoText("hwloc: cannot export the topology as XML"));
  }
  // `length` counts the terminating NUL.
  std::string xml(buffer, length > 0 ? static_cast<size_t>(length - 1) : 0);
  hwloc_free_xmlbuffer(handle_, buffer);
  return xml;
}

int Topology::allowed_pu_count() const {
  return static_cast<int>(std::count_if(pus_.begin(), pus_.end(), [](const Pu& p) { return p.allowed; }));
}

bool Topology::this_system() const { return hwloc_topology_is_thissystem(handle_) != 0; }

std::string Topology::Summary() const {
  auto plural = [](size_t n, std::string_view one, std::string_view many) {
    return std::to_string(n) + " " + std::string(n == 1 ? one : many);
  };
  return plural(static_cast<size_t>(package_count_), "package", "packages") + ", " +
         plural(static_cast<size_t>(numa_count_), "NUMA node", "NUMA nodes") + ", " +
         plural(cores_.size(), "core", "cores") + ", " + plural(pus_.size(), "PU", "PUs") + " (" +
         std::to_string(allowed_pu_count()) + " allowed), " + plural(gpus_.size(), "GPU", "GPUs") + ", " +
         plural(static_cast<size_t>(kind_count_), "CPU kind", "CPU kinds");
}

}  // namespace scimesh::launcher

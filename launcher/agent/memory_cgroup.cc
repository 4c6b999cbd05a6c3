// Reading the OOM killer's count and the limit of this process's memory cgroup.
#include "launcher/agent/memory_cgroup.h"

#include <signal.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <vector>

namespace scimesh::agent {
namespace {

// Limits at or above this mean "none" (v1 writes 2^63 rounded to a page).
constexpr int64_t kUnlimited = int64_t{1} << 62;

std::string ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str().substr(0, 1 << 16);
}

std::optional<int64_t> ToInt(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0) return std::nullopt;
  return v;
}

// The value of `key` in a "key value" per line file (memory.oom_control, memory.events).
int64_t KeyedValue(const std::string& text, std::string_view key) {
  std::istringstream in(text);
  std::string k, v;
  while (in >> k >> v) {
    if (k == key) return ToInt(v).value_or(0);
  }
  return 0;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    const size_t at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s.remove_prefix(at + 1);
  }
}

struct Hierarchy {
  bool v2 = false;
  std::string mount;  // where it is mounted
  std::string path;   // this process's cgroup in it ("/a/b")
};

std::optional<Hierarchy> FindMemoryHierarchy(std::string_view proc_cgroup, std::string_view mounts) {
  std::string v1_mount, v2_mount;
  for (std::string_view line : Split(mounts, '\n')) {
    const auto f = Split(line, ' ');
    if (f.size() < 4) continue;
    if (f[2] == "cgroup") {
      for (std::string_view opt : Split(f[3], ',')) {
        if (opt == "memory" && v1_mount.empty()) v1_mount = std::string(f[1]);
      }
    } else if (f[2] == "cgroup2" && v2_mount.empty()) {
      v2_mount = std::string(f[1]);
    }
  }
  for (std::string_view line : Split(proc_cgroup, '\n')) {
    const size_t a = line.find(':');
    const size_t b = a == std::string_view::npos ? a : line.find(':', a + 1);
    if (b == std::string_view::npos) continue;
    const std::string_view controllers = line.substr(a + 1, b - a - 1);
    const std::string_view path = line.substr(b + 1);
    if (path.empty() || path.front() != '/' || path.find("..") != std::string_view::npos) continue;
    if (!v1_mount.empty()) {
      for (std::string_view c : Split(controllers, ',')) {
        if (c == "memory") return Hierarchy{false, v1_mount, std::string(path)};
      }
    } else if (!v2_mount.empty() && controllers.empty() && line.substr(0, a) == "0") {
      return Hierarchy{true, v2_mount, std::string(path)};
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<MemoryCgroup> ReadMemoryCgroup(std::string_view proc_cgroup, std::string_view mounts) {
  const auto h = FindMemoryHierarchy(proc_cgroup, mounts);
  if (!h) return std::nullopt;
  MemoryCgroup m;
  bool any = false;
  // This cgroup, then each parent up to the hierarchy's root (inclusive).
  std::string path = h->path == "/" ? "" : h->path;
  while (true) {
    const std::string dir = h->mount + path;
    const std::string limit_text = ReadSmallFile(dir + (h->v2 ? "/memory.max" : "/memory.limit_in_bytes"));
    const std::string events = ReadSmallFile(dir + (h->v2 ? "/memory.events" : "/memory.oom_control"));
    if (!limit_text.empty() || !events.empty()) any = true;
    if (auto limit = ToInt(limit_text); limit && *limit > 0 && *limit < kUnlimited) {
      m.limit_bytes = m.limit_bytes == 0 ? *limit : std::min(m.limit_bytes, *limit);
    }
    const int64_t kills = KeyedValue(events, "oom_kill");
    m.oom_kills = h->v2 ? std::max(m.oom_kills, kills) : m.oom_kills + kills;
    if (path.empty()) break;
    path.erase(path.rfind('/'));
  }
  if (!any) return std::nullopt;
  return m;
}

std::optional<MemoryCgroup> ReadOwnMemoryCgroup() {
  return ReadMemoryCgroup(ReadSmallFile("/proc/self/cgroup"), ReadSmallFile("/proc/self/mounts"));
}

int64_t MemoryLimitKillMib(const std::optional<MemoryCgroup>& before, const std::optional<MemoryCgroup>& after,
                           bool signaled, int code) {
  if (!signaled || code != SIGKILL || !before || !after || after->oom_kills <= before->oom_kills) return 0;
  if (after->limit_bytes == 0) return -1;
  return std::max<int64_t>(1, after->limit_bytes / (1024 * 1024));
}

}  // namespace scimesh::agent

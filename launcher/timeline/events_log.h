// EventsLog: the launcher's events file (JSON lines: allocation, claim, place,
// start, end, outcome), what `scimesh-launch report` turns into a timeline.
// Format: docs/launcher.md "Events file".
#pragma once

#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>

#include "launcher/placement/placement.h"
#include "protocol/util/status.h"
#include "protocol/wire/wire.h"

namespace scimesh::launcher {

// Thread-safe: every write is one whole line under a mutex, flushed at once
// (the file must survive a launcher killed mid-run).
class EventsLog {
 public:
  // Opens `path` for appending; an empty path gives a log that writes nothing.
  static Result<std::unique_ptr<EventsLog>> Open(const std::string& path);
  ~EventsLog();

  void Allocation(const std::vector<NodeFree>& nodes, std::string_view worker_id);
  void Claim(int offered, int max);
  void Place(const Lease& lease, const Placement& placement);
  void Start(const Lease& lease);
  void End(const Lease& lease, std::string_view how);
  void Outcome(const Lease& lease, std::string_view outcome, std::string_view detail);

 private:
  explicit EventsLog(std::FILE* f) : file_(f) {}
  void Write(std::string_view event, const std::string& fields);

  std::mutex mu_;
  std::FILE* file_ = nullptr;
};

// JSON string literal for `s` (quotes included).
std::string JsonString(std::string_view s);

}  // namespace scimesh::launcher

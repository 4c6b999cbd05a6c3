// EventsLog: the launcher's events file (JSON lines: allocation, claim,
// claim_failed, place, start, end, outcome), what `scimesh-launch report` turns into a timeline.
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
  // An empty claim answered like the one before, or a claim failing for the
  // same reason as the one before, is not a line of its own: the repeats
  // are counted and written as one line with "repeated": N when the answer
  // changes, at most a minute later, and at close.
  void Claim(int offered, int max);
  void ClaimFailed(std::string_view reason);
  void Place(const Lease& lease, const Placement& placement);
  void Start(const Lease& lease);
  void End(const Lease& lease, std::string_view how);
  void Outcome(const Lease& lease, std::string_view outcome, std::string_view detail);

 private:
  explicit EventsLog(std::FILE* f) : file_(f) {}
  void Write(std::string_view event, const std::string& fields);
  // Writes a line unless it repeats the last condition line (see Claim).
  void WriteCondition(std::string_view event, const std::string& fields, bool repeatable);
  void WriteLocked(double t, std::string_view event, const std::string& fields);
  void FlushRepeatsLocked();

  std::mutex mu_;
  std::FILE* file_ = nullptr;
  std::string condition_event_, condition_fields_;  // the last condition line written
  int repeats_ = 0;                                  // since that line
  double last_repeat_t_ = 0;
  double condition_written_t_ = 0;
};

// JSON string literal for `s` (quotes included).
std::string JsonString(std::string_view s);

}  // namespace scimesh::launcher

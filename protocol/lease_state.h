// The lease state file (docs/protocol.md "Local files"): rewritten
// atomically by whoever heartbeats, read by the launcher and the SPANK plugin.
//
// Plain values and free functions; thread-safe. The writer is the one
// HeartbeatLoop of a lease (or its owner after the loop stopped).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/cancellation.h"
#include "protocol/status.h"

namespace scimesh {

enum class LeaseHold { kHeld, kLost, kDone };

std::string_view LeaseHoldName(LeaseHold hold);

struct LeaseState {
  std::string lease_id;
  int64_t attempt = 0;
  std::string holder;  // "launcher" or "rank0"
  std::string host;
  int64_t pid = 0;
  LeaseHold state = LeaseHold::kHeld;
  std::optional<CancelReason> reason;  // with kLost: fenced, run_terminal, expired, not_started
  int64_t seq = 0;                     // +1 on every write, so readers see progress
  int64_t deadline_mono_ms = 0;        // CLOCK_MONOTONIC on `host`
  std::string lease_expires_at;        // informational
};

std::string SerializeLeaseState(const LeaseState& s);
Result<LeaseState> ParseLeaseState(std::string_view json);

// Writes `path` atomically (0644: it holds no secret, and the plugin or an
// operator may read it as another user).
Status WriteLeaseState(const std::string& path, const LeaseState& s);
Result<LeaseState> ReadLeaseState(const std::string& path);

}  // namespace scimesh

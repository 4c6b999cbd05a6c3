// The lease state file (docs/protocol.md "Local files"): rewritten
// atomically by whoever heartbeats, read by the launcher and the SPANK plugin.
//
// Also the hand-over rules between holders: take-over (rank 0 finds the
// lease held and starts beating), hand-back (rank 0 gives it back when the
// program ends), and "a deadline only counts on the host that measured it".
//
// Plain values and free functions; thread-safe. The writer is the one
// HeartbeatLoop of a lease (or its owner after the loop stopped).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/util/cancellation.h"
#include "protocol/util/status.h"
#include "protocol/wire/lease_deadline.h"

namespace scimesh {

enum class LeaseHold { kHeld, kLost, kDone };

std::string_view LeaseHoldName(LeaseHold hold);

// Who heartbeats: the client library's worker (a launcher's RunLease or a
// program using Worker), a launcher writing for itself, or rank 0 of an MPI step.
enum class LeaseHolder { kWorker, kLauncher, kRank0 };

std::string_view LeaseHolderName(LeaseHolder holder);  // "worker", "launcher", "rank0"
std::optional<LeaseHolder> ParseLeaseHolder(std::string_view name);

struct LeaseState {
  std::string lease_id;
  int64_t attempt = 0;
  LeaseHolder holder = LeaseHolder::kWorker;
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
// Reads lease.state of attempt directory `dir_fd` with the safe reader
// (protocol/attempt_files.h): a file of `owner`, no symlink, no FIFO, capped.
Result<LeaseState> ReadLeaseStateAt(int dir_fd, uid_t owner);
// The same for a path (its owner must be this process's effective uid).
Result<LeaseState> ReadLeaseState(const std::string& path);

// True when `s` says `holder` holds the lease now (state held).
bool HeldBy(const LeaseState& s, LeaseHolder holder);

// The deadline in `s` when it was measured on `host`'s CLOCK_MONOTONIC (the
// only clock it may be compared with); nullopt elsewhere or when unset.
std::optional<LeaseDeadline> DeadlineOnHost(const LeaseState& s, std::string_view host);

// `s` handed back to `to` by process `pid`: holder and pid replaced, seq + 1.
LeaseState HandedBack(LeaseState s, LeaseHolder to, int64_t pid);

}  // namespace scimesh

// What the lease state file says about a running step: keep it, cancel it
// at once (lost where another attempt may run: fenced, expired, not_started;
// or its deadline passed without renewal), let it end within its grace (its
// run was cancelled by its owner: run_terminal), or stop watching (done).
//
// A LeaseJudge is a plain value fed one observation at a time by one thread;
// no clock or file access of its own, so tests drive it with any timeline.
#pragma once

#include <cstdint>
#include <string>

#include "protocol/attempt/lease_state.h"
#include "protocol/util/status.h"

namespace scimesh::spank {

struct Judgement {
  enum class Action {
    kKeep,
    // Signal the step now: another attempt of the step may run (or be
    // about to), so this one must be fenced off.
    kCancel,
    // The run was cancelled by its owner (run_terminal): no other attempt
    // can start for it, so nothing needs fencing. The ranks see it through
    // scimesh_step_cancelled(); signals only after the grace.
    kEndWithinGrace,
    kStopWatching,
  };
  Action action = Action::kKeep;
  std::string why;  // for every action but kKeep: one line for the log
};

class LeaseJudge {
 public:
  // `host`: this node's hostname; only a state written on this host has a
  // deadline_mono_ms this node may compare with its CLOCK_MONOTONIC. Elsewhere
  // the state must show progress (`seq`) at least every `lease_ttl_ms`.
  // `start_ms`: CLOCK_MONOTONIC ms when watching began.
  LeaseJudge(std::string lease_id, int64_t attempt, std::string host, int64_t lease_ttl_ms, int64_t start_ms);

  // `read` is the lease state file as just read (or why it could not be).
  Judgement Observe(const Result<LeaseState>& read, int64_t now_ms);

 private:
  Judgement Unreadable(const std::string& cause, int64_t now_ms) const;

  std::string lease_id_;
  int64_t attempt_;
  std::string host_;
  int64_t ttl_ms_;
  int64_t last_progress_ms_;  // when the state last changed (or watching began)
  int64_t last_seq_ = -1;
};

}  // namespace scimesh::spank

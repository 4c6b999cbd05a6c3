// HeartbeatHub: keeps many leases alive from ONE thread and ONE libcurl multi
// handle (kept-alive HTTP/1.1 connections, reused by every lease's beats; at
// most 8 beats in flight, the rest wait first come, first served).
//
// Each lease gets a HeartbeatControl handle that behaves exactly like a
// HeartbeatLoop (heartbeat_loop.h; both follow HeartbeatState's rules): beats
// from `granted_at` every interval, the local deadline measured from each
// beat's send, the state file rewritten after each beat, the token cancelled
// on fenced / run_terminal / not_started / already_applied / expiry, and the
// take-over by `yields_to`. A beat's tries are retried on transport errors,
// 5xx and 429 with the client's backoff until the lease's deadline. Expiry is
// the hub's own timer: a hanging coordinator delays no lease's expiry, and a
// slow beat of one lease delays no other lease.
//
// The thread sleeps until something is due (a beat, a retry, a deadline, a
// transfer's progress, or a handle's call): no periodic polling.
//
// Ownership and thread-safety: all members and every handle's members are
// thread-safe. Handles may outlive the hub: destroying the hub stops every
// lease as Stop() would (beats in flight are abandoned, tokens are left as
// they are); afterwards a handle's Stop/MarkDone/MarkLost/deadline/beats
// still work (the state file is still written), Start() fails.
#pragma once

#include <memory>
#include <thread>

#include "protocol/client.h"
#include "protocol/heartbeat_control.h"

namespace scimesh {

struct HubCore;

class HeartbeatHub {
 public:
  // Checks the coordinator URL like Client::Create and starts the thread.
  static Result<std::unique_ptr<HeartbeatHub>> Create(ClientOptions options);
  ~HeartbeatHub();
  HeartbeatHub(const HeartbeatHub&) = delete;
  HeartbeatHub& operator=(const HeartbeatHub&) = delete;

  // A handle for one lease; beats start with its Start(). Never null.
  std::unique_ptr<HeartbeatControl> Add(HeartbeatConfig config, std::shared_ptr<CancellationToken> token);

 private:
  class Runner;
  HeartbeatHub(std::shared_ptr<HubCore> core, std::unique_ptr<Runner> runner);

  std::shared_ptr<HubCore> core_;
  std::unique_ptr<Runner> runner_;
  std::thread thread_;
};

}  // namespace scimesh

// HeartbeatHub: keeps many leases alive from ONE thread and ONE libcurl multi
// handle (kept-alive HTTP/1.1 connections, reused by every lease's beats; at
// most 8 beats in flight, the rest wait first come, first served).
//
// Each lease gets a HeartbeatControl handle that behaves exactly like a
// HeartbeatLoop (heartbeat_loop.h; both follow HeartbeatState's rules): beats
// from `granted_at` every interval (a little early: see the grid below), the
// local deadline measured from each beat's send, the state file rewritten
// after each beat, the token cancelled on fenced / run_terminal / not_started
// / already_applied / expiry, and the take-over by `yields_to`. A beat's
// tries are retried on transport errors, 5xx and 429 with the client's
// backoff until the lease's deadline. Expiry is the hub's own timer: a
// hanging coordinator delays no lease's expiry, and a slow beat of one lease
// delays no other lease.
//
// The thread sleeps until something is due (a beat, a retry, a deadline, a
// transfer's progress, or a handle's call): no periodic polling. Each beat
// falls due on a grid shared by all leases (NextBeatOnGrid in
// lease_deadline.h), so the beats of leases due close together go out in one
// wake-up: a beat goes up to an eighth of its interval (at most 256 ms)
// early, never late. Once a batch of tries has gone out, the thread naps
// 4 ms before it reads their answers (once per batch: a hung transfer is
// never polled), so that a batch's answers cost one wake-up, not one each;
// timers (beats, retries, deadlines) and handles' calls still wake it at
// once, and freed connections still go to the beats queued longest.
//
// Ownership and thread-safety: all members and every handle's members are
// thread-safe. Handles may outlive the hub: destroying the hub stops every
// lease as Stop() would (beats in flight are abandoned, tokens are left as
// they are); afterwards a handle's Stop/MarkDone/MarkLost/deadline/beats
// still work (the state file is still written), Start() fails.
#pragma once

#include <cstdint>
#include <memory>
#include <thread>

#include "protocol/client/client.h"
#include "protocol/runtime/heartbeat_control.h"

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

  // What the hub's thread has done so far: figures for benchmarks and tests.
  struct Counts {
    int64_t wakeups = 0;      // times it slept (in poll or a nap) and woke
    int64_t beats = 0;        // beats begun (a beat's retries not counted)
    int64_t beat_rounds = 0;  // wake-ups that began one beat or more
  };
  Counts counts() const;

 private:
  class Runner;
  HeartbeatHub(const Clock& clock, std::shared_ptr<HubCore> core, std::unique_ptr<Runner> runner);

  const Clock& clock_;  // ClientOptions::clock
  int watch_ = 0;       // clock_'s Watch id
  std::shared_ptr<HubCore> core_;
  std::unique_ptr<Runner> runner_;
  std::thread thread_;
};

}  // namespace scimesh

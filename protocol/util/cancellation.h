// CancellationToken: tells a running body (and everything it waits on) that
// its lease is gone or the worker is stopping.
//
// Shared between the heartbeat loop (which cancels) and the body (which
// polls or waits); hold it by std::shared_ptr. All members are thread-safe.
// Cancellation is one-way and the first reason wins.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "protocol/util/clock.h"

namespace scimesh {

// Why a lease's work must stop. The first four are the lease state file's
// `lost` reasons (docs/protocol.md "Local files").
enum class CancelReason {
  kFenced,          // a newer attempt holds the step
  kRunTerminal,     // the run is over
  kExpired,         // the local deadline passed without a successful heartbeat
  kNotStarted,      // the coordinator says `started` never arrived (a worker bug)
  kAlreadyApplied,  // the outcome was already recorded: nothing more to do
  kShutdown,        // the worker is stopping
};

std::string_view CancelReasonName(CancelReason reason);

class CancellationToken {
 public:
  // Cancels with `reason` unless already cancelled. Wakes every waiter.
  void Cancel(CancelReason reason);

  bool cancelled() const;
  std::optional<CancelReason> reason() const;

  // Blocks until cancelled or the steady clock reaches `deadline`;
  // returns whether it is cancelled.
  bool WaitUntil(MonoTime deadline) const;
  bool WaitFor(Millis timeout) const { return WaitUntil(std::chrono::steady_clock::now() + timeout); }

  // Calls `fn` once when the token is cancelled: on the cancelling thread,
  // after the reason is set and outside the token's lock; at once (on this
  // thread) if it is cancelled already. For event loops that must not poll;
  // `fn` should only hand the news over (post it to its loop) and be quick.
  void OnCancel(std::function<void()> fn) const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::optional<CancelReason> reason_;
  mutable std::vector<std::function<void()>> on_cancel_;
};

}  // namespace scimesh

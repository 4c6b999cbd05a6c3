// CancellationToken: tells a running body (and everything it waits on) that
// its lease is gone or the worker is stopping.
//
// Shared between the heartbeat loop (which cancels) and the body (which
// polls or waits); hold it by std::shared_ptr. All members are thread-safe.
// Cancellation is one-way and the first reason wins.
#pragma once

#include <condition_variable>
#include <mutex>
#include <optional>
#include <string_view>

#include "protocol/clock.h"

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

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::optional<CancelReason> reason_;
};

}  // namespace scimesh

// CancellationToken: one-way, first reason wins, waiters woken.
#include "protocol/util/cancellation.h"

namespace scimesh {

std::string_view CancelReasonName(CancelReason reason) {
  switch (reason) {
    case CancelReason::kFenced: return "fenced";
    case CancelReason::kRunTerminal: return "run_terminal";
    case CancelReason::kExpired: return "expired";
    case CancelReason::kNotStarted: return "not_started";
    case CancelReason::kAlreadyApplied: return "already_applied";
    case CancelReason::kShutdown: return "shutdown";
  }
  return "unknown";
}

void CancellationToken::Cancel(CancelReason reason) {
  std::vector<std::function<void()>> observers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (reason_) return;
    reason_ = reason;
    observers.swap(on_cancel_);
  }
  cv_.notify_all();
  for (auto& fn : observers) fn();
}

void CancellationToken::OnCancel(std::function<void()> fn) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!reason_) {
      on_cancel_.push_back(std::move(fn));
      return;
    }
  }
  fn();
}

bool CancellationToken::cancelled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reason_.has_value();
}

std::optional<CancelReason> CancellationToken::reason() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reason_;
}

bool CancellationToken::WaitUntil(MonoTime deadline) const {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_until(lock, deadline, [&] { return reason_.has_value(); });
  return reason_.has_value();
}

}  // namespace scimesh

// The sweeper thread: sleep until the next due change (or a second), sweep.
#include "coordinator/sweeper.h"

#include <algorithm>
#include <chrono>

#include <spdlog/spdlog.h>

#include "coordinator/ledger.h"
#include "coordinator/wire_time.h"

namespace scimesh::coordinator {

void Sweeper::Start() { thread_ = std::thread([this] { Loop(); }); }

void Sweeper::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Sweeper::DueAt(int64_t at_ms) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (due_ && *due_ <= at_ms) return;
    due_ = at_ms;
  }
  cv_.notify_all();
}

void Sweeper::Loop() {
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) return;
      due_.reset();
    }
    std::optional<int64_t> next;
    try {
      auto swept = ledger_.Sweep();
      if (swept.ok()) {
        next = *swept;
      } else {
        spdlog::warn("sweeper: sweep failed, retrying in a second: {}", swept.status().ToString());
      }
    } catch (const std::exception& e) {  // a thread entry point: nothing may escape
      spdlog::error("sweeper: sweep threw: {}", e.what());
    }
    std::unique_lock<std::mutex> lock(mu_);
    const int64_t now = NowMs();
    int64_t wake = now + 1000;
    if (next) wake = std::min(wake, *next);
    // Wake when the earliest known change falls due, or when told of an earlier one.
    while (!stop_) {
      int64_t target = due_ ? std::min(wake, *due_) : wake;
      int64_t wait_ms = target - NowMs();
      if (wait_ms <= 0) break;
      cv_.wait_for(lock, std::chrono::milliseconds(wait_ms));
    }
  }
}

}  // namespace scimesh::coordinator

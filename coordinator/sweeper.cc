// The sweeper thread: sleep until the next due change (or a second), sweep.
#include "coordinator/sweeper.h"

#include <algorithm>
#include <chrono>

#include <spdlog/spdlog.h>

#include "coordinator/ledger.h"

namespace scimesh::coordinator {

void Sweeper::Start() {
  thread_.Start([this] { Loop(); });
}

void Sweeper::Stop() { thread_.Stop(); }

void Sweeper::DueAt(int64_t at_ms) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (due_ && *due_ <= at_ms) return;
    due_ = at_ms;
  }
  thread_.Wake();
}

void Sweeper::Loop() {
  const WallClock& clock = *ledger_.options().clock;
  while (!thread_.Stopping()) {
    {
      std::lock_guard<std::mutex> lock(mu_);
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
    const int64_t wake = std::min(clock.NowMs() + 1000, next.value_or(INT64_MAX));
    if (!WaitUntil(wake)) return;
  }
}

bool Sweeper::WaitUntil(int64_t wake_ms) {
  const WallClock& clock = *ledger_.options().clock;
  for (;;) {
    int64_t target = wake_ms;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (due_) target = std::min(target, *due_);
    }
    const int64_t wait_ms = target - clock.NowMs();
    if (wait_ms <= 0) return true;
    if (!thread_.WaitFor(std::chrono::milliseconds(wait_ms))) return false;
  }
}

}  // namespace scimesh::coordinator

// The real steady clock.
#include "protocol/util/clock.h"

namespace scimesh {
namespace {

class Steady final : public Clock {
 public:
  MonoTime Now() const override { return std::chrono::steady_clock::now(); }
};

}  // namespace

void ManualClock::Advance(MonoTime::duration d) {
  now_ += d.count();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [id, wake] : watchers_) wake();
}

int ManualClock::Watch(std::function<void()> wake) const {
  std::lock_guard<std::mutex> lock(mu_);
  watchers_.emplace(next_id_, std::move(wake));
  return next_id_++;
}

void ManualClock::Unwatch(int id) const {
  std::lock_guard<std::mutex> lock(mu_);
  watchers_.erase(id);
}

const Clock& SteadyClock() {
  static const Steady* clock = new Steady();  // never destroyed: usable during exit
  return *clock;
}

}  // namespace scimesh

// The real steady clock.
#include "protocol/clock.h"

namespace scimesh {
namespace {

class Steady final : public Clock {
 public:
  MonoTime Now() const override { return std::chrono::steady_clock::now(); }
};

}  // namespace

const Clock& SteadyClock() {
  static const Steady* clock = new Steady();  // never destroyed: usable during exit
  return *clock;
}

}  // namespace scimesh

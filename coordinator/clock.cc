// The system clock behind the WallClock interface.
#include "coordinator/clock.h"

#include "coordinator/wire_time.h"

namespace scimesh::coordinator {

int64_t SystemWallClock::NowMs() const { return ::scimesh::coordinator::NowMs(); }

std::shared_ptr<const WallClock> DefaultWallClock() {
  static const std::shared_ptr<const WallClock> clock = std::make_shared<SystemWallClock>();
  return clock;
}

}  // namespace scimesh::coordinator

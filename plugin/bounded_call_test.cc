// RunWithin: a hook never waits on a stalled call past its bound.
#include "plugin/bounded_call.h"

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

namespace scimesh::spank {
namespace {

using namespace std::chrono_literals;

TEST(BoundedCall, AQuickCallIsWaitedFor) {
  std::atomic<int> ran{0};
  EXPECT_TRUE(RunWithin([&ran] { ran = 1; }, 5s));
  EXPECT_EQ(ran.load(), 1);
}

TEST(BoundedCall, AStalledCallIsLeftBehindWithItsOwnState) {
  struct Gate {
    std::mutex mu;
    std::condition_variable cv;
    bool open = false, done = false;
  };
  auto gate = std::make_shared<Gate>();
  // The call holds its own reference: it may outlive this scope safely.
  EXPECT_FALSE(RunWithin(
      [gate] {
        std::unique_lock l(gate->mu);
        gate->cv.wait_for(l, 10s, [&] { return gate->open; });
        gate->done = true;
        gate->cv.notify_all();
      },
      50ms));
  std::unique_lock l(gate->mu);
  EXPECT_FALSE(gate->done);
  gate->open = true;
  gate->cv.notify_all();
  EXPECT_TRUE(gate->cv.wait_for(l, 10s, [&] { return gate->done; }));
}

}  // namespace
}  // namespace scimesh::spank

// Tests of StoppableThread: Stop() ends a long wait at once, a Wake() ends
// one early and is kept when it comes before the wait.
#include "coordinator/stoppable_thread.h"

#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

namespace scimesh::coordinator {
namespace {

using std::chrono::hours;

// Whether `done` turns true within 30 s (bounded so a broken thread fails).
template <typename Done>
bool Eventually(Done done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!done() && std::chrono::steady_clock::now() < until) std::this_thread::yield();
  return done();
}

TEST(StoppableThread, StopEndsALongWaitAndTheBody) {
  StoppableThread thread;
  std::atomic<int> waits{0};
  thread.Start([&] {
    while (thread.WaitFor(hours(1))) ++waits;
  });
  const auto started = std::chrono::steady_clock::now();
  thread.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(30)) << "Stop waited out the hour";
  EXPECT_EQ(waits.load(), 0);
  EXPECT_TRUE(thread.Stopping());
  thread.Stop();  // idempotent
}

TEST(StoppableThread, AWakeEndsAWaitEarlyEvenWhenItCameFirst) {
  StoppableThread thread;
  thread.Wake();  // before any wait: not lost
  std::atomic<int> woken{0};
  thread.Start([&] {
    while (thread.WaitFor(hours(1))) ++woken;
  });
  ASSERT_TRUE(Eventually([&] { return woken.load() == 1; }));
  thread.Wake();
  ASSERT_TRUE(Eventually([&] { return woken.load() == 2; }));
  thread.Stop();
  EXPECT_EQ(woken.load(), 2);
}

}  // namespace
}  // namespace scimesh::coordinator

// The event loop: posted work in order, timers in time order and cancelable,
// a watched descriptor's callback when it turns readable.
#include "launcher/event_loop.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <future>
#include <vector>

#include <gtest/gtest.h>

namespace scimesh::launcher {
namespace {

TEST(EventLoop, PostedWorkRunsOnTheLoopThreadInOrder) {
  auto loop = EventLoop::Create();
  ASSERT_TRUE(loop.ok());
  std::vector<int> order;
  std::promise<bool> on_loop;
  for (int i = 0; i < 5; ++i) (*loop)->Post([&order, i] { order.push_back(i); });
  (*loop)->Post([&] { on_loop.set_value((*loop)->OnLoopThread()); });
  EXPECT_TRUE(on_loop.get_future().get());
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST(EventLoop, TimersRunInTimeOrderAndACancelledOneNever) {
  auto loop = EventLoop::Create();
  ASSERT_TRUE(loop.ok());
  std::vector<int> fired;
  std::promise<void> done;
  (*loop)->Post([&] {
    EventLoop& l = **loop;
    l.After(std::chrono::milliseconds(30), [&] { fired.push_back(3); });
    const uint64_t cancelled = l.After(std::chrono::milliseconds(20), [&] { fired.push_back(99); });
    l.After(std::chrono::milliseconds(10), [&] { fired.push_back(1); });
    l.Cancel(cancelled);
    l.After(std::chrono::milliseconds(60), [&] { done.set_value(); });
  });
  done.get_future().wait();
  EXPECT_EQ(fired, (std::vector<int>{1, 3}));
}

TEST(EventLoop, AWatchedDescriptorCallsBackWhenReadableUntilUnwatched) {
  auto loop = EventLoop::Create();
  ASSERT_TRUE(loop.ok());
  const int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  std::promise<uint64_t> got;
  (*loop)->Post([&] {
    ASSERT_TRUE((*loop)
                    ->Watch(fd,
                            [&] {
                              uint64_t v = 0;
                              (void)!::read(fd, &v, sizeof v);
                              (*loop)->Unwatch(fd);  // a callback may unwatch itself
                              got.set_value(v);
                            })
                    .ok());
  });
  const uint64_t seven = 7;
  ASSERT_EQ(::write(fd, &seven, sizeof seven), static_cast<ssize_t>(sizeof seven));
  EXPECT_EQ(got.get_future().get(), 7u);
  ::close(fd);
}

}  // namespace
}  // namespace scimesh::launcher

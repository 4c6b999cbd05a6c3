// WorkQueue: the first lane goes before queued claims; Drain waits for all.
#include "coordinator/work_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <string>

namespace scimesh::coordinator {
namespace {

TEST(WorkQueue, QueuedFirstLaneTasksRunBeforeQueuedClaims) {
  WorkQueue q(1);
  std::promise<void> release;
  std::shared_future<void> go = release.get_future().share();
  q.Push(WorkQueue::Lane::kFirst, [go] { go.wait(); });  // occupies the one thread
  std::string order;
  std::mutex mu;
  auto note = [&](char c) {
    std::lock_guard<std::mutex> lock(mu);
    order += c;
  };
  q.Push(WorkQueue::Lane::kClaims, [&] { note('c'); });
  q.Push(WorkQueue::Lane::kClaims, [&] { note('d'); });
  q.Push(WorkQueue::Lane::kFirst, [&] { note('h'); });  // a heartbeat behind two claims
  release.set_value();
  q.Drain();
  EXPECT_EQ(order, "hcd");
}

TEST(WorkQueue, DrainWaitsForEveryPushedTask) {
  WorkQueue q(4);
  std::atomic<int> done{0};
  for (int i = 0; i < 100; ++i) {
    q.Push(i % 2 ? WorkQueue::Lane::kFirst : WorkQueue::Lane::kClaims, [&] { ++done; });
  }
  q.Drain();
  EXPECT_EQ(done.load(), 100);
}

}  // namespace
}  // namespace scimesh::coordinator

// The handler threads and their two lanes.
#include "coordinator/work_queue.h"

namespace scimesh::coordinator {

WorkQueue::WorkQueue(size_t threads) {
  for (size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { Run(); });
}

WorkQueue::~WorkQueue() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (auto& t : threads_) t.join();
}

void WorkQueue::Push(Lane lane, Task task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    (lane == Lane::kFirst ? first_ : claims_).push_back(std::move(task));
  }
  ready_.notify_one();
}

void WorkQueue::Drain() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [this] { return first_.empty() && claims_.empty() && running_ == 0; });
}

void WorkQueue::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    ready_.wait(lock, [this] { return stopping_ || !first_.empty() || !claims_.empty(); });
    if (first_.empty() && claims_.empty()) return;  // stopping, nothing left
    auto& lane = first_.empty() ? claims_ : first_;
    Task task = std::move(lane.front());
    lane.pop_front();
    ++running_;
    lock.unlock();
    task();
    lock.lock();
    --running_;
    if (running_ == 0 && first_.empty() && claims_.empty()) idle_.notify_all();
  }
}

}  // namespace scimesh::coordinator

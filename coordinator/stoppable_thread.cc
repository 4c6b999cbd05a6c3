// A background thread that can be woken and stopped.
#include "coordinator/stoppable_thread.h"

namespace scimesh::coordinator {

void StoppableThread::Start(std::function<void()> body) { thread_ = std::thread(std::move(body)); }

void StoppableThread::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool StoppableThread::WaitFor(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [this] { return stopping_ || woken_; });
  woken_ = false;
  return !stopping_;
}

bool StoppableThread::Stopping() {
  std::lock_guard<std::mutex> lock(mu_);
  return stopping_;
}

void StoppableThread::Wake() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    woken_ = true;
  }
  cv_.notify_all();
}

}  // namespace scimesh::coordinator

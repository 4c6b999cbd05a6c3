// StoppableThread: the coordinator's background threads (the sweeper, the
// artifact collector, the connection watchdog) — a thread running one body
// that sleeps only through WaitFor, so that Stop() ends any wait at once and
// joins. Thread-safe; owns its thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace scimesh::coordinator {

class StoppableThread {
 public:
  StoppableThread() = default;
  ~StoppableThread() { Stop(); }
  StoppableThread(const StoppableThread&) = delete;
  StoppableThread& operator=(const StoppableThread&) = delete;

  // Runs `body` on a new thread. Call once.
  void Start(std::function<void()> body);
  // Asks the body to end (every WaitFor from now on returns false at once)
  // and joins it. Idempotent; call it from the owner, not from the body.
  void Stop();

  // From the body: sleeps for `timeout`, or until Wake() or Stop(). False
  // once stopping: the body should return.
  bool WaitFor(std::chrono::milliseconds timeout);
  // Ends the current (or the next) WaitFor early. Any thread.
  void Wake();
  // Whether Stop() was called.
  bool Stopping();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool woken_ = false;
  std::thread thread_;
};

}  // namespace scimesh::coordinator

// EventLoop: one thread, one epoll set. It watches file descriptors (a
// step's pidfd, the inotify descriptor, a node agent's channel), runs timers
// and runs work posted from other threads. Nothing polls: the thread sleeps
// in epoll_wait until a descriptor is ready, the next timer is due or work
// is posted.
//
// Thread-safety: Post() and Stop() from any thread; everything else only on
// the loop's thread (from a callback or posted work).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "protocol/util/status.h"
#include "protocol/util/unique_fd.h"

namespace scimesh::launcher {

class EventLoop {
 public:
  using Callback = std::function<void()>;
  using Clock = std::chrono::steady_clock;

  static Result<std::unique_ptr<EventLoop>> Create();
  ~EventLoop();  // Stop()s and joins; work still queued is dropped
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Runs `fn` on the loop's thread soon, in posting order.
  void Post(Callback fn);
  // Ends the loop after the callback in progress; idempotent.
  void Stop();
  bool OnLoopThread() const { return std::this_thread::get_id() == thread_.get_id(); }

  // `on_ready` runs whenever `fd` is readable (or hung up), until Unwatch.
  Status Watch(int fd, Callback on_ready);
  void Unwatch(int fd);

  // `fn` runs once at `when`; the id cancels it. Ids are never 0.
  uint64_t At(Clock::time_point when, Callback fn);
  uint64_t After(std::chrono::milliseconds delay, Callback fn) { return At(Clock::now() + delay, std::move(fn)); }
  void Cancel(uint64_t timer);  // unknown or already run: nothing

 private:
  EventLoop(UniqueFd epoll, UniqueFd wake) : epoll_(std::move(epoll)), wake_(std::move(wake)) {}
  void Run();
  void RunPosted();
  int TimeoutMs() const;
  void RunDueTimers();

  UniqueFd epoll_;
  UniqueFd wake_;  // eventfd: posted work or Stop
  std::map<int, std::shared_ptr<Callback>> watched_;
  std::multimap<Clock::time_point, std::pair<uint64_t, Callback>> timers_;
  std::map<uint64_t, std::multimap<Clock::time_point, std::pair<uint64_t, Callback>>::iterator> timer_index_;
  uint64_t next_timer_ = 1;

  std::mutex mu_;  // guards posted_ and stop_
  std::vector<Callback> posted_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace scimesh::launcher

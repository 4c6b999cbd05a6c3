// One epoll set: descriptors, timers, posted work.
#include "launcher/event_loop.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>

#include <cerrno>
#include <cstring>

#include "protocol/util/log.h"

namespace scimesh::launcher {

Result<std::unique_ptr<EventLoop>> EventLoop::Create() {
  UniqueFd ep(::epoll_create1(EPOLL_CLOEXEC));
  if (!ep.valid()) return Status::Internal(std::string("epoll_create1: ") + std::strerror(errno));
  UniqueFd wake(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake.valid()) return Status::Internal(std::string("eventfd: ") + std::strerror(errno));
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = wake.get();
  if (::epoll_ctl(ep.get(), EPOLL_CTL_ADD, wake.get(), &ev) != 0) {
    return Status::Internal(std::string("epoll_ctl: ") + std::strerror(errno));
  }
  std::unique_ptr<EventLoop> loop(new EventLoop(std::move(ep), std::move(wake)));
  loop->thread_ = std::thread([l = loop.get()] { l->Run(); });
  return loop;
}

EventLoop::~EventLoop() {
  Stop();
  if (thread_.joinable()) thread_.join();
}

void EventLoop::Post(Callback fn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    posted_.push_back(std::move(fn));
  }
  const uint64_t one = 1;
  (void)!::write(wake_.get(), &one, sizeof one);
}

void EventLoop::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  const uint64_t one = 1;
  (void)!::write(wake_.get(), &one, sizeof one);
}

Status EventLoop::Watch(int fd, Callback on_ready) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) {
    return Status::Internal(std::string("epoll_ctl: ") + std::strerror(errno));
  }
  watched_[fd] = std::make_shared<Callback>(std::move(on_ready));
  return Status::Ok();
}

void EventLoop::Unwatch(int fd) {
  if (watched_.erase(fd) > 0) ::epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, fd, nullptr);
}

uint64_t EventLoop::At(Clock::time_point when, Callback fn) {
  const uint64_t id = next_timer_++;
  timer_index_[id] = timers_.emplace(when, std::make_pair(id, std::move(fn)));
  return id;
}

void EventLoop::Cancel(uint64_t timer) {
  auto it = timer_index_.find(timer);
  if (it == timer_index_.end()) return;
  timers_.erase(it->second);
  timer_index_.erase(it);
}

int EventLoop::TimeoutMs() const {
  if (timers_.empty()) return -1;
  const auto wait = timers_.begin()->first - Clock::now();
  if (wait <= Clock::duration::zero()) return 0;
  // Rounded up: waking a little late is fine, waking early spins.
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(wait).count();
  return static_cast<int>(std::min<int64_t>(ms, 60000));
}

void EventLoop::RunDueTimers() {
  const auto now = Clock::now();
  while (!timers_.empty() && timers_.begin()->first <= now) {
    auto node = timers_.extract(timers_.begin());
    timer_index_.erase(node.mapped().first);
    node.mapped().second();  // may add or cancel timers
  }
}

void EventLoop::RunPosted() {
  std::vector<Callback> work;
  {
    std::lock_guard<std::mutex> lock(mu_);
    work.swap(posted_);
  }
  for (auto& fn : work) fn();
}

void EventLoop::Run() {
  constexpr int kMaxEvents = 64;
  epoll_event events[kMaxEvents];
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) return;
    }
    const int n = ::epoll_wait(epoll_.get(), events, kMaxEvents, TimeoutMs());
    if (n < 0 && errno != EINTR) {
      log::For("launcher")->error("event loop: epoll_wait: {}", std::strerror(errno));
      return;
    }
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == wake_.get()) {
        uint64_t count;
        (void)!::read(wake_.get(), &count, sizeof count);
        RunPosted();
        continue;
      }
      auto it = watched_.find(fd);
      if (it == watched_.end()) continue;  // unwatched by an earlier callback
      std::shared_ptr<Callback> cb = it->second;  // the callback may unwatch itself
      (*cb)();
    }
    RunDueTimers();
  }
}

}  // namespace scimesh::launcher

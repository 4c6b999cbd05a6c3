// ConnectionLimits: what one connection may cost the coordinator before a
// handler ever sees it. Caps on open connections in total and per client
// address (past them a request is answered 503 + Retry-After), a deadline for
// the request line and headers, and a minimum rate for the body. A watchdog
// thread shuts down (shutdown(2)) the socket of a connection past its
// deadline; the server then sees the peer gone and closes it.
// Independent of the server library: connections are opaque ids with a
// socket. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

namespace scimesh::coordinator {

struct ConnectionCaps {
  int64_t max_connections = 8192;           // open at once, all clients
  int64_t max_per_address = 1024;           // open at once from one client address
  int64_t head_timeout_ms = 10000;          // request line + headers, from the first byte wait
  int64_t body_min_rate = 4096;             // bytes/s a body must keep up after the head deadline's allowance
  int retry_after_s = 5;                    // told to clients refused 503
};

class ConnectionLimits {
 public:
  using Clock = std::chrono::steady_clock;
  using Id = const void*;

  explicit ConnectionLimits(ConnectionCaps caps);
  ~ConnectionLimits();  // stops the watchdog
  ConnectionLimits(const ConnectionLimits&) = delete;
  ConnectionLimits& operator=(const ConnectionLimits&) = delete;

  void Start();
  void Stop();
  const ConnectionCaps& caps() const { return caps_; }

  // Whether a new connection from `address` may be accepted at all: false
  // well past the caps (twice the per-address cap, or the total cap plus the
  // margin kept for answering 503s), where even a 503 costs too much.
  bool Acceptable(const std::string& address);
  // A connection opened: counted, and its head deadline starts. Returns
  // false if it is over a cap (its requests are answered 503).
  bool Opened(Id id, int fd, const std::string& address);
  // The head of a request arrived: the body's rate is watched from now.
  void HeadArrived(Id id);
  void BodyArrived(Id id, uint64_t bytes);
  // The request is complete (handled, held or being answered): no deadline.
  void Exempt(Id id);
  // The answer was sent; the connection waits for a next request's head.
  void RequestDone(Id id);
  // The connection is gone; its socket must not be touched again.
  void Closed(Id id);

  int64_t open();
  uint64_t closed_for_head() const { return closed_head_; }
  uint64_t closed_for_body() const { return closed_body_; }

 private:
  enum class Phase { kHead, kBody, kExempt };
  struct Conn {
    int fd;
    std::string address;
    Phase phase;
    Clock::time_point since;
    uint64_t body_bytes = 0;
  };
  void Watch();
  bool Late(const Conn& c, Clock::time_point now) const;

  const ConnectionCaps caps_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::unordered_map<Id, Conn> conns_;
  std::map<std::string, int64_t> per_address_;
  bool stopping_ = false;
  std::thread watchdog_;
  std::atomic<uint64_t> closed_head_{0};
  std::atomic<uint64_t> closed_body_{0};
};

}  // namespace scimesh::coordinator

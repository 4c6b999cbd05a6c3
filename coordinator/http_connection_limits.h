// ConnectionLimits: what one connection may cost the coordinator before a
// handler ever sees it.
//
// Two budgets. A connection starts *unauthenticated* and has a short
// deadline for its request line and headers; such connections are capped in
// total and per client address, and past either cap the one open longest is
// closed, never the newest: a flood of keyless connections from any number of
// addresses cannot keep a worker's fresh connection out. A request carrying a
// known key moves its connection to the *authenticated* budget (its own cap;
// past it requests are answered 503 + Retry-After), where the flood does not
// reach it. Bodies must keep a minimum rate. A watchdog thread shuts down
// (shutdown(2)) the socket of a connection past its deadline; the server then
// sees the peer gone and closes it.
//
// Independent of the server library: connections are opaque ids with a
// socket. Deadlines are measured on an injected monotonic clock
// (protocol/clock.h). Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

#include "coordinator/stoppable_thread.h"
#include "protocol/util/clock.h"

namespace scimesh::coordinator {

struct ConnectionCaps {
  int64_t max_connections = 8192;        // authenticated connections open at once; past it 503
  int64_t max_unauthenticated = 1024;    // unauthenticated connections open at once; past it the oldest closes
  int64_t max_per_address = 256;         // unauthenticated ones from one address; past it that address's oldest closes
  int64_t head_timeout_ms = 10000;       // request line + headers, from the first byte wait
  int64_t unauthenticated_head_timeout_ms = 3000;  // the same, for a connection that presented no known key yet
  int64_t body_min_rate = 4096;          // bytes/s a body must keep up after the head deadline's allowance
  int retry_after_s = 5;                 // told to clients refused 503
};

class ConnectionLimits {
 public:
  using Id = const void*;

  // `clock` is borrowed and must outlive this.
  explicit ConnectionLimits(ConnectionCaps caps, const Clock& clock = SteadyClock());
  ~ConnectionLimits();  // stops the watchdog
  ConnectionLimits(const ConnectionLimits&) = delete;
  ConnectionLimits& operator=(const ConnectionLimits&) = delete;

  // The watchdog: a CutLate() pass every 250 ms on its own thread.
  void Start();
  void Stop();
  // Shuts down every connection past its head deadline or below the body
  // rate (each once).
  void CutLate();
  const ConnectionCaps& caps() const { return caps_; }

  // Whether a new connection may be accepted at all: false only past both
  // caps and a margin (the descriptors the coordinator must keep).
  bool Acceptable();
  // A connection opened, unauthenticated: counted, its head deadline starts,
  // and the longest-open unauthenticated connection of its address (or of
  // all) is closed if a cap is now exceeded.
  void Opened(Id id, int fd, const std::string& address);
  // Its request carried a known key: the connection counts as authenticated
  // from now on. False (it stays unauthenticated) past max_connections.
  bool Authenticated(Id id);
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
  uint64_t closed_for_room() const { return closed_room_; }  // unauthenticated, closed to make room

 private:
  enum class Phase { kHead, kBody, kExempt };
  struct Conn {
    int fd;
    std::string address;
    Phase phase;
    MonoTime since;
    uint64_t order;  // opening order: the lowest listed one is the oldest
    uint64_t body_bytes = 0;
    bool authenticated = false;
    bool cut = false;  // shut down; no longer counted against a cap
  };
  void Watch();
  // The connection starts waiting for a head (kHead) or a body (kBody) now.
  void Enter(Id id, Phase phase);
  int64_t HeadTimeout(const Conn& c) const;
  bool Late(const Conn& c, MonoTime now) const;
  void CutLateLocked();
  // Shuts `c` down and takes it off the unauthenticated lists. Under mu_.
  void Cut(Conn& c);
  void Unlist(const Conn& c);
  void CutOldest(std::map<uint64_t, Id>& among);

  const ConnectionCaps caps_;
  const Clock& clock_;
  std::mutex mu_;
  std::unordered_map<Id, Conn> conns_;
  // Unauthenticated, not cut: by opening order, in all and per address.
  std::map<uint64_t, Id> unauthenticated_;
  std::map<std::string, std::map<uint64_t, Id>> by_address_;
  int64_t authenticated_ = 0;
  uint64_t next_order_ = 0;
  StoppableThread watchdog_;
  std::atomic<uint64_t> closed_head_{0};
  std::atomic<uint64_t> closed_body_{0};
  std::atomic<uint64_t> closed_room_{0};
};

}  // namespace scimesh::coordinator

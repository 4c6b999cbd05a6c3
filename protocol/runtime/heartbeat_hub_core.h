// HubCore: what a HeartbeatHub shares with its handles: the queue of leases
// whose state changed, and the wake-up of the hub's thread (the multi
// handle's, or `woken` while it naps). Outlives the hub while handles hold
// it; once the hub is gone, Poke() returns false.
//
// Internal to libscimesh_protocol. Thread-safe.
#pragma once

#include <curl/curl.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

namespace scimesh {

struct HubLease;

struct HubCore {
  std::mutex mu;
  bool running = true;   // false once the hub's thread is told to end
  CURLM* multi = nullptr;
  std::vector<std::shared_ptr<HubLease>> changed;
  // The thread naps on `woken` (its transfers' sockets unwatched) rather
  // than in curl_multi_poll.
  bool napping = false;
  std::condition_variable woken;

  // Asks the hub's thread to look at `lease` now; false when the hub is gone.
  bool Poke(std::shared_ptr<HubLease> lease) {
    std::lock_guard<std::mutex> lock(mu);
    if (!running) return false;
    changed.push_back(std::move(lease));
    Wake();
    return true;
  }

  // Wakes the hub's thread at once, wherever it sleeps (`mu` held).
  void Wake() {
    if (napping) {
      woken.notify_one();
    } else {
      curl_multi_wakeup(multi);
    }
  }
};

}  // namespace scimesh

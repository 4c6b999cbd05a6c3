// A blocking call on its own thread, waited for at most a bound.
#include "plugin/bounded_call.h"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "plugin/lease_watch.h"
#include "plugin/quiet_thread.h"
#include "plugin/spank_log.h"

namespace scimesh::spank {
namespace {

struct CallState {
  std::function<void()> call;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
};

}  // namespace

bool RunWithin(std::function<void()> call, std::chrono::milliseconds bound) {
  auto state = std::make_shared<CallState>();
  state->call = std::move(call);
  auto thread = StartQuietThread([state] {
    try {
      state->call();
    } catch (...) {
      LogError("a bounded call failed");
    }
    std::lock_guard lock(state->mu);
    state->done = true;
    state->cv.notify_all();
  });
  if (!thread.ok()) {
    LogError(thread.status().message());
    return false;
  }
  std::unique_lock lock(state->mu);
  const bool done = state->cv.wait_for(lock, bound, [&] { return state->done; });
  lock.unlock();
  if (done) {
    thread->join();
  } else {
    PinThisModule();
    thread->detach();
  }
  return done;
}

}  // namespace scimesh::spank

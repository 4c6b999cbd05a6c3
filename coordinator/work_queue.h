// WorkQueue: the coordinator's handler threads. Requests whose head and body
// have fully arrived run here, never on the connection thread; two lanes so
// that lease calls, registration and the run API go before claims (a claim
// that finds nothing is held without a thread, see ClaimHolds).
// Thread-safe. Tasks must not throw.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace scimesh::coordinator {

class WorkQueue {
 public:
  enum class Lane { kFirst, kClaims };
  using Task = std::function<void()>;

  explicit WorkQueue(size_t threads);
  // Runs what is queued, then joins the threads.
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  void Push(Lane lane, Task task);
  // Waits until every task pushed so far has finished (graceful shutdown).
  void Drain();
  size_t threads() const { return threads_.size(); }

 private:
  void Run();

  std::mutex mu_;
  std::condition_variable ready_;
  std::condition_variable idle_;
  std::deque<Task> first_;
  std::deque<Task> claims_;
  size_t running_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace scimesh::coordinator

// WorkPool: a few threads for the blocking parts of a lease (inputs,
// `started`, run.setup and run.finish, collecting, uploads, complete/fail),
// so many leases' coordinator calls are in flight together while no lease
// owns a thread. Each thread has its own Client (keep-alive connection).
//
// Thread-safety: Submit() from any thread. The destructor runs what is
// queued, then joins.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "protocol/client/client.h"

namespace scimesh::launcher {

class WorkPool {
 public:
  using Task = std::function<void(Client& client)>;

  static Result<std::unique_ptr<WorkPool>> Create(const ClientOptions& options, int threads);
  ~WorkPool();
  WorkPool(const WorkPool&) = delete;
  WorkPool& operator=(const WorkPool&) = delete;

  void Submit(Task task);

 private:
  WorkPool() = default;
  void Serve(Client& client);

  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<Task> queue_;
  bool closing_ = false;
  std::vector<std::unique_ptr<Client>> clients_;
  std::vector<std::thread> threads_;
};

}  // namespace scimesh::launcher

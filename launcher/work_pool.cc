// A fixed set of threads, each with its own Client, serving one queue.
#include "launcher/work_pool.h"

#include "protocol/util/log.h"

namespace scimesh::launcher {

Result<std::unique_ptr<WorkPool>> WorkPool::Create(const ClientOptions& options, int threads) {
  std::unique_ptr<WorkPool> pool(new WorkPool());
  for (int i = 0; i < threads; ++i) {
    auto client = Client::Create(options);
    if (!client.ok()) return client.status();
    pool->clients_.push_back(std::move(*client));
  }
  for (auto& client : pool->clients_) {
    pool->threads_.emplace_back([p = pool.get(), c = client.get()] { p->Serve(*c); });
  }
  return pool;
}

WorkPool::~WorkPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
  }
  ready_.notify_all();
  for (auto& t : threads_) t.join();
}

void WorkPool::Submit(Task task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(task));
  }
  ready_.notify_one();
}

void WorkPool::Serve(Client& client) {
  for (;;) {
    Task task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      ready_.wait(lock, [&] { return closing_ || !queue_.empty(); });
      if (queue_.empty()) return;  // closing, and nothing left to run
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    try {
      task(client);
    } catch (const std::exception& e) {
      // A lease's task never throws by design; if one does, the pool lives on.
      log::For("launcher")->error("work pool: unexpected error: {}", e.what());
    }
  }
}

}  // namespace scimesh::launcher

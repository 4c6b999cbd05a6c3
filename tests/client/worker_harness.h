// A Worker serving from a FakeCoordinator on its own thread, with a temporary
// spool and the lease reports collected for assertions. Test-only code.
#pragma once

#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "protocol/runtime/worker.h"
#include "tests/client/fake_coordinator.h"

namespace scimesh::testing {

class WorkerHarness {
 public:
  explicit WorkerHarness(const std::string& token, int64_t lease_ttl_ms = 2000, int64_t heartbeat_ms = 100);
  ~WorkerHarness();  // stops the worker, removes the spool

  FakeCoordinator& coordinator() { return fake_; }
  WorkerOptions& options() { return options_; }
  const std::string& spool() const { return spool_; }

  // Definition "wf"/"1" with one step per body.
  void Hold(std::map<std::string, StepBody> bodies);
  // Creates the worker and runs Serve() on a thread.
  void Start();
  // The next lease report, or nullopt after `timeout`.
  std::optional<LeaseReport> NextReport(Millis timeout = Millis(15000));
  // Stops the worker and waits for Serve() to return; returns its Status.
  Status StopAndJoin();
  // Waits for Serve() to return by itself.
  std::optional<Status> JoinWithin(Millis timeout);

 private:
  FakeCoordinator fake_;
  std::string spool_;
  WorkerOptions options_;
  std::map<std::string, StepBody> bodies_;
  std::unique_ptr<Worker> worker_;
  std::thread serving_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<LeaseReport> reports_;
  size_t taken_ = 0;
  std::optional<Status> served_;
};

}  // namespace scimesh::testing

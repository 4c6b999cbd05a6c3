// For unit tests: a Ledger on a fresh database in its own temporary
// directory, closed and removed when the TestLedger goes away.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "coordinator/clock.h"
#include "coordinator/ledger.h"
#include "coordinator/requests.h"

namespace scimesh::coordinator {

class TestLedger {
 public:
  // Opens the ledger; a failure is a test failure and leaves get() null.
  explicit TestLedger(const Ledger::Options& options, Ledger::Signals signals = {}) {
    char tmpl[] = "/tmp/scimesh-ledger-test-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) {
      ADD_FAILURE() << "mkdtemp failed";
      return;
    }
    dir_ = tmpl;
    auto ledger = Ledger::Open(dir_ + "/coordinator.db", options, std::move(signals));
    EXPECT_TRUE(ledger.ok()) << ledger.status().ToString();
    if (ledger.ok()) ledger_ = std::move(ledger).value();
  }
  ~TestLedger() {
    ledger_.reset();
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }
  TestLedger(const TestLedger&) = delete;
  TestLedger& operator=(const TestLedger&) = delete;

  Ledger* get() const { return ledger_.get(); }
  Ledger* operator->() const { return ledger_.get(); }

 private:
  std::string dir_;
  std::unique_ptr<Ledger> ledger_;
};

// A test on a TestLedger whose time is a ManualClock, with a worker key and
// an execute key.
class ManualClockLedgerTest : public ::testing::Test {
 protected:
  // Opens the ledger with `options` on clock_; a failure fails the test.
  void OpenLedger(Ledger::Options options, Ledger::Signals signals = {}) {
    options.clock = clock_;
    test_ledger_ = std::make_unique<TestLedger>(options, std::move(signals));
    ledger_ = test_ledger_->get();
    ASSERT_NE(ledger_, nullptr);
  }

  // Starts a run of `workflow` with the execute key; "" (and a failure) if refused.
  std::string StartRunOf(const std::string& workflow) {
    auto req = ReadRunCreateRequest(R"({"workflow":")" + workflow + R"(","input":{}})");
    EXPECT_TRUE(req.ok());
    auto run = ledger_->CreateRun(req.value(), exec_);
    EXPECT_TRUE(run.ok()) << (run.ok() ? "" : run.error().message);
    return run.ok() ? run.value().run_id : "";
  }
  // A claim by `id` with the worker key, offering `nodes` nodes of 4 cpus
  // for an hour (none: no `free`).
  std::vector<Lease> ClaimOffering(const std::string& id, std::optional<int> nodes, int max = 1) {
    ClaimRequest req;
    req.worker_id = id;
    req.max = max;
    if (nodes) {
      FreeCapacity f;
      for (int i = 0; i < *nodes; ++i) f.nodes.push_back({"n" + std::to_string(i), 4, 0});
      f.walltime_s = 3600;
      req.free = f;
    }
    auto reply = ledger_->Claim(req, worker_);
    EXPECT_TRUE(reply.ok());
    return reply.ok() ? reply.value().leases : std::vector<Lease>{};
  }

  std::shared_ptr<ManualClock> clock_ = std::make_shared<ManualClock>();
  std::unique_ptr<TestLedger> test_ledger_;
  Ledger* ledger_ = nullptr;  // owned by test_ledger_
  KeyIdentity worker_{"w", kScopeWorker};
  KeyIdentity exec_{"e", kScopeExecute};
};

}  // namespace scimesh::coordinator

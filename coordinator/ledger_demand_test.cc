// The demand on a real Ledger with a ManualClock: counts per step as a chain
// of needs moves, backoff, what the live workers' offers could take, which
// workflows a key sees, and the bound on groups.
#include <gtest/gtest.h>

#include "coordinator/ledger.h"
#include "coordinator/requests.h"
#include "coordinator/test_ledger.h"
#include "coordinator/unfittable.h"

namespace scimesh::coordinator {
namespace {

class DemandTest : public ManualClockLedgerTest {
 protected:
  void SetUp() override {
    Ledger::Options o;
    o.lease_ttl_ms = 600000;
    OpenLedger(o);
  }
  void Register(const std::string& worker_id, const std::string& definitions, const KeyIdentity& key) {
    auto req = ReadRegisterRequest(R"({"worker_id":")" + worker_id +
                                   R"(","host":"h","version":"1","concurrency":4,"definitions":[)" + definitions + "]}");
    ASSERT_TRUE(req.ok()) << req.error().message;
    auto reg = ledger_->Register(req.value(), key);
    ASSERT_TRUE(reg.ok()) << reg.error().message;
  }
  static std::string Def(const std::string& workflow, const std::string& steps) {
    return R"({"workflow":")" + workflow + R"(","version":"1","steps":[)" + steps + "]}";
  }
  QueuedDemand Demand(const KeyIdentity& key, std::vector<std::string> workflows = {}) {
    auto d = ledger_->Demand(DemandQuery{std::move(workflows)}, key);
    EXPECT_TRUE(d.ok()) << (d.ok() ? "" : d.error().message);
    return d.ok() ? d.value() : QueuedDemand{};
  }
  // "step:runnable/backing_off/waiting/running" per group, in order.
  static std::vector<std::string> Counts(const QueuedDemand& d) {
    std::vector<std::string> out;
    for (const DemandGroup& g : d.groups) {
      out.push_back(g.step_id + ":" + std::to_string(g.runnable) + "/" + std::to_string(g.backing_off) + "/" +
                    std::to_string(g.waiting) + "/" + std::to_string(g.running));
    }
    return out;
  }
  LeaseCaller Caller(const Lease& l) const { return LeaseCaller{"w", false, "a", l.attempt}; }

  using Steps = std::vector<std::string>;
};

TEST_F(DemandTest, RunnableAndWaitingMoveAlongAChainOfNeeds) {
  Register("a", Def("chain", R"({"id":"one"},{"id":"two","needs":["one"]},{"id":"three","needs":["two"]})"),
           worker_);
  StartRunOf("chain");
  StartRunOf("chain");
  EXPECT_EQ(Counts(Demand(worker_)), (Steps{"one:2/0/0/0", "two:0/0/2/0", "three:0/0/2/0"}));

  auto leases = ClaimOffering("a", std::nullopt);
  ASSERT_EQ(leases.size(), 1u);
  EXPECT_EQ(Counts(Demand(worker_)), (Steps{"one:1/0/0/1", "two:0/0/2/0", "three:0/0/2/0"}));
  CompleteRequest done;
  done.worker_id = "a";
  done.attempt = 1;
  ASSERT_TRUE(ledger_->Complete(leases[0].lease_id, Caller(leases[0]), done).ok());
  EXPECT_EQ(Counts(Demand(worker_)), (Steps{"one:1/0/0/0", "two:1/0/1/0", "three:0/0/2/0"}));

  // A retryable failure waits out its backoff (1 s, +-20 %): backing_off, then runnable.
  leases = ClaimOffering("a", std::nullopt);
  ASSERT_EQ(leases.size(), 1u);
  ASSERT_EQ(leases[0].step_id, "two");  // the oldest run first
  FailRequest fail{"a", 1, FailClass::kRetryable, "again"};
  ASSERT_TRUE(ledger_->Fail(leases[0].lease_id, Caller(leases[0]), fail).ok());
  EXPECT_EQ(Counts(Demand(worker_)), (Steps{"one:1/0/0/0", "two:0/1/1/0", "three:0/0/2/0"}));
  clock_->Advance(1201);
  EXPECT_EQ(Counts(Demand(worker_)), (Steps{"one:1/0/0/0", "two:1/0/1/0", "three:0/0/2/0"}));
}

TEST_F(DemandTest, OnlyRunningRunsCountNotOnesPastTheirDeadline) {
  Register("a", Def("wf", R"({"id":"s"})"), worker_);
  const std::string cancelled = StartRunOf("wf");
  ASSERT_TRUE(ledger_->CancelRun(cancelled, exec_).ok());
  auto req = ReadRunCreateRequest(R"({"workflow":"wf","input":{},"deadline_s":1})");
  ASSERT_TRUE(req.ok());
  ASSERT_TRUE(ledger_->CreateRun(req.value(), exec_).ok());
  StartRunOf("wf");
  EXPECT_EQ(Counts(Demand(worker_)), (Steps{"s:2/0/0/0"}));
  clock_->Advance(1001);  // no sweep ran: the run is still stored as running
  EXPECT_EQ(Counts(Demand(worker_)), (Steps{"s:1/0/0/0"}));
}

TEST_F(DemandTest, WhatTheLiveWorkersLargestOffersCouldTake) {
  // "pair": 2 nodes of 2 ranks x 1 cpu; 4 nodes of 4 cpus hold 4 of them.
  const std::string def = Def("fit", R"({"id":"pair","resources":{"nodes":2,"ranks_per_node":2},"walltime_s":60})");
  Register("small", def, worker_);
  Register("large", def, worker_);
  for (int i = 0; i < 5; ++i) StartRunOf("fit");
  DemandGroup g = Demand(worker_).groups.at(0);
  EXPECT_EQ(g.runnable, 5);
  EXPECT_EQ(g.live_workers, 0);
  EXPECT_EQ(g.claimable_by_live_workers, 0);
  EXPECT_FALSE(g.unfittable) << "no live worker: no verdict";

  EXPECT_TRUE(ClaimOffering("small", 1).empty());  // one node: nothing fits
  g = Demand(worker_).groups.at(0);
  EXPECT_EQ(g.live_workers, 1);
  EXPECT_EQ(g.claimable_by_live_workers, 0);
  ASSERT_TRUE(g.unfittable);
  EXPECT_EQ(g.unfittable->reason, "needs 2 nodes, largest offer 1");

  ASSERT_EQ(ClaimOffering("large", 4, 1).size(), 1u);  // idle: offers 4 nodes, takes one
  g = Demand(worker_).groups.at(0);
  EXPECT_EQ(g.runnable, 4);
  EXPECT_EQ(g.running, 1);
  EXPECT_EQ(g.live_workers, 2);
  EXPECT_EQ(g.claimable_by_live_workers, 4) << "its largest offer, not what is free now";
  EXPECT_FALSE(g.unfittable);

  Register("unknown", def, worker_);
  ClaimOffering("unknown", std::nullopt);  // no `free`: its size is unknown (it takes a step)
  g = Demand(worker_).groups.at(0);
  EXPECT_EQ(g.live_workers, 3);
  EXPECT_FALSE(g.claimable_by_live_workers);
  EXPECT_EQ(g.runnable, 3);
}

TEST_F(DemandTest, AKeySeesOnlyTheWorkflowsItMayRegister) {
  const KeyIdentity other{"o", kScopeWorker};
  const KeyIdentity globbed{"g", kScopeWorker, {"the*"}};
  Register("a", Def("mine", R"({"id":"s"})"), worker_);
  Register("b", Def("theirs", R"({"id":"s"})"), other);
  StartRunOf("mine");
  StartRunOf("theirs");
  auto workflows = [](const QueuedDemand& d) {
    std::vector<std::string> out;
    for (const DemandGroup& g : d.groups) out.push_back(g.workflow);
    return out;
  };
  EXPECT_EQ(workflows(Demand(worker_)), Steps{"mine"});
  EXPECT_EQ(workflows(Demand(other)), Steps{"theirs"});
  EXPECT_EQ(workflows(Demand(globbed)), Steps{"theirs"});
  EXPECT_EQ(workflows(Demand(KeyIdentity{"root", kScopeAdmin})), (Steps{"mine", "theirs"}));
  EXPECT_EQ(workflows(Demand(worker_, {"mine"})), Steps{"mine"});
  EXPECT_TRUE(Demand(worker_, {"nothing-yet"}).groups.empty()) << "nobody's: no running run";

  auto refused = ledger_->Demand(DemandQuery{{"mine", "theirs"}}, worker_);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().http_status, 403);
  EXPECT_EQ(refused.error().error, "not_owner");
  EXPECT_FALSE(ledger_->Demand(DemandQuery{{"mine"}}, globbed).ok()) << "its glob does not match";
}

TEST_F(DemandTest, AtMostTheBoundOfGroupsThenMore) {
  std::string steps;
  for (int i = 0; i < 129; ++i) steps += std::string(i ? "," : "") + R"({"id":"s)" + std::to_string(i) + R"("})";
  Register("a", Def("wf1", steps) + "," + Def("wf2", steps), worker_);
  StartRunOf("wf1");
  StartRunOf("wf2");
  QueuedDemand d = Demand(worker_);
  ASSERT_EQ(d.groups.size(), kMaxDemandGroups);
  EXPECT_TRUE(d.more);
  EXPECT_EQ(d.groups.back().workflow, "wf2");
  EXPECT_EQ(d.groups.back().step_id, "s126");
  d = Demand(worker_, {"wf2"});
  EXPECT_EQ(d.groups.size(), 129u);
  EXPECT_FALSE(d.more);
  EXPECT_EQ(d.groups.back().step_id, "s128");
}

}  // namespace
}  // namespace scimesh::coordinator

// The client and the Worker against the REAL scimesh-coordinator binary:
// a two-step run with artifacts, each 409 reason produced by the coordinator,
// a complete whose answer a proxy drops, a run cancelled mid-body, and the
// worker-hello example.
#include <httplib.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>

#include <gtest/gtest.h>

#include "protocol/client/client.h"
#include "protocol/runtime/worker.h"
#include "tests/client/hostile_server.h"
#include "tests/client/real_coordinator.h"

namespace scimesh {
namespace {

using testing::ChildProcess;
using testing::RealCoordinator;
using testing::RecordedRequest;
using testing::Reply;

class RealCoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto c = RealCoordinator::Start({"--lease-ttl-ms", "2000", "--heartbeat-ms", "200", "--grace-ms", "500",
                                     "--retry-base-ms", "50"});
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    coord_ = std::move(*c);
    std::string tmpl = (std::filesystem::temp_directory_path() / "scimesh-spool-XXXXXX").string();
    spool_ = ::mkdtemp(tmpl.data());
  }
  void TearDown() override {
    if (HasFailure() && coord_) std::cerr << "coordinator log:\n" << coord_->Log() << "\n";
    coord_.reset();
    std::filesystem::remove_all(spool_);
  }

  ClientOptions Options(const std::string& url = "") const {
    ClientOptions o;
    o.coordinator_url = url.empty() ? coord_->url() : url;
    o.token = Token(coord_->token());
    o.backoff = BackoffPolicy{Millis(20), 2.0, 0.5, Millis(200)};
    o.retry_budget = Millis(5000);
    return o;
  }
  std::unique_ptr<Client> NewClient() { return Client::Create(Options()).value(); }

  // Starts a run of `workflow`, after its definition was registered.
  std::string StartRun(Client& c, const std::string& workflow, const std::string& input = "{}") {
    RunCreateRequest req;
    req.workflow = workflow;
    req.input_json = input;
    auto r = c.StartRun(req);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->run_id : "";
  }

  WorkerOptions WorkerOpts(const std::string& worker_id) {
    WorkerOptions w;
    w.client = Options();
    w.worker_id = worker_id;
    w.spool_dir = spool_;
    w.wait_ms = 500;
    return w;
  }

  std::unique_ptr<RealCoordinator> coord_;
  std::string spool_;
};

// Collects lease reports from a Worker running on its own thread.
class Served {
 public:
  explicit Served(WorkerOptions o) {
    o.on_lease_finished = [this](const LeaseReport& r) {
      std::lock_guard<std::mutex> lock(mu_);
      reports_.push_back(r);
      cv_.notify_all();
    };
    worker_ = std::make_unique<Worker>(std::move(o));
  }
  ~Served() { (void)Stop(); }
  Worker& worker() { return *worker_; }
  void Start() {
    thread_ = std::thread([this] { status_ = worker_->Serve(); });
  }
  std::vector<LeaseReport> WaitFor(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::seconds(30), [&] { return reports_.size() >= n; });
    return reports_;
  }
  Status Stop() {
    worker_->Stop();
    if (thread_.joinable()) thread_.join();
    return status_;
  }

 private:
  std::unique_ptr<Worker> worker_;
  std::thread thread_;
  Status status_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<LeaseReport> reports_;
};

TEST_F(RealCoordinatorTest, AWorkerCarriesATwoStepRunWithArtifactsToCompletion) {
  Served served(WorkerOpts("real/1"));
  StepDefinition produce{"produce", {}, std::string(R"({"n":"{{input.n}}"})"), {}, {}, {}, {}, {}};
  StepDefinition consume{"consume", {"produce"}, std::string(R"({"from":"{{steps.produce.output}}"})"), {}, {}, {}, {}, {}};
  std::string consumed;
  ASSERT_TRUE(served.worker()
                  .Register(WorkflowDefinition{"e2e", "1", {produce, consume}},
                            {{"produce", [](StepContext& ctx) {
                                (void)ctx.WriteArtifact("field.txt", "42 42 42\n", "text/plain");
                                (void)ctx.SetStatePatch(R"({"produced":true})");
                                return StepResult::Output(R"({"cells":)" + std::to_string(ctx.input()["n"].GetInt()) + "}");
                              }},
                             {"consume", [&](StepContext& ctx) {
                                auto path = ctx.InputArtifactPath("produce", "field.txt");
                                if (!path.ok()) return StepResult::Fatal(path.status().message());
                                std::ifstream in(*path);
                                std::getline(in, consumed);
                                return StepResult::Output(R"({"read":")" + consumed + R"("})");
                              }}})
                  .ok());
  served.Start();
  auto client = NewClient();
  // The run can start once the worker registered the definition.
  std::string run;
  for (int i = 0; i < 100 && run.empty(); ++i) {
    RunCreateRequest req{"e2e", std::nullopt, R"({"n":8})", std::nullopt, std::nullopt};
    auto r = client->StartRun(req);
    if (r.ok()) run = r->run_id;
    else std::this_thread::sleep_for(Millis(50));  // not registered yet: a 404
  }
  ASSERT_FALSE(run.empty());
  auto reports = served.WaitFor(2);
  ASSERT_EQ(reports.size(), 2u);
  for (const auto& r : reports) EXPECT_EQ(r.end, LeaseEnd::kCompleted) << r.step_id << ": " << r.detail;
  EXPECT_TRUE(served.Stop().ok());
  EXPECT_EQ(consumed, "42 42 42");

  auto view = client->ShowRun(run);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ(view->status, "completed");
  ASSERT_EQ(view->steps.size(), 2u);
  EXPECT_EQ(view->state_json, R"({"produced":true})");
  for (const auto& s : view->steps) {
    EXPECT_EQ(s.status, "completed") << s.step_id;
    ASSERT_EQ(s.attempts.size(), 1u);
    EXPECT_EQ(s.attempts[0].worker_id, "real/1");
  }
  const StepView& p = view->steps[0].step_id == "produce" ? view->steps[0] : view->steps[1];
  EXPECT_EQ(p.output_json, R"({"cells":8})");
  ASSERT_EQ(p.artifacts.size(), 1u);
  EXPECT_EQ(p.artifacts[0].name, "field.txt");
  EXPECT_EQ(p.artifacts[0].size, 9);
  auto journal = client->RunJournal(run);
  ASSERT_TRUE(journal.ok()) << journal.status().ToString();
  int started = 0, completed = 0;
  for (const auto& e : journal->events) {
    started += e.type == "attempt_started";
    completed += e.type == "attempt_completed";
  }
  EXPECT_EQ(started, 2);
  EXPECT_EQ(completed, 2);
}

TEST_F(RealCoordinatorTest, EachRefusalReasonComesFromTheRealCoordinatorByName) {
  auto c = NewClient();
  StepDefinition a{"a", {}, {}, {}, {}, {}, Delivery::kAtLeastOnce, {}};
  StepDefinition b{"b", {}, {}, {}, {}, {}, Delivery::kAtMostOnce, {}};
  auto reg = c->Register(RegisterRequest{"refusals/1", "h", "test", 2, {WorkflowDefinition{"refusals", "1", {a, b}}}});
  ASSERT_TRUE(reg.ok()) << reg.status().ToString();
  const std::string run = StartRun(*c, "refusals");
  auto claim = c->Claim(ClaimRequest{"refusals/1", 2, 2000, run, std::nullopt});
  ASSERT_TRUE(claim.ok()) << claim.status().ToString();
  ASSERT_EQ(claim->response.leases.size(), 2u);
  const Lease& la = claim->response.leases[0].step_id == "a" ? claim->response.leases[0] : claim->response.leases[1];
  const Lease& lb = claim->response.leases[0].step_id == "b" ? claim->response.leases[0] : claim->response.leases[1];
  LeaseCall ca{la.lease_id, la.attempt, "refusals/1", std::nullopt};
  LeaseCall cb{lb.lease_id, lb.attempt, "refusals/1", std::nullopt};

  // not_started: complete of an at_most_once attempt whose started never came.
  auto ns = c->Complete(cb, CompleteRequest{});
  ASSERT_TRUE(ns.ok()) << ns.status().ToString();
  EXPECT_TRUE(ns->refused_with(RefusalReason::kNotStarted));

  // fenced: the right lease, the wrong attempt.
  auto fenced = c->Heartbeat(LeaseCall{la.lease_id, la.attempt + 1, "refusals/1", std::nullopt});
  ASSERT_TRUE(fenced.ok()) << fenced.status().ToString();
  EXPECT_TRUE(fenced->refused_with(RefusalReason::kFenced));

  // The deadline a heartbeat grants is measured from its send.
  auto hb = c->Heartbeat(ca);
  ASSERT_TRUE(hb.ok() && hb->applied) << hb.status().ToString();
  EXPECT_EQ(hb->applied->response.lease_ttl_ms, 2000);
  EXPECT_EQ(hb->applied->deadline.at(), hb->applied->sent_at + Millis(2000));

  // already_applied: the same complete twice.
  auto first = c->Complete(ca, CompleteRequest{});
  ASSERT_TRUE(first.ok() && first->applied) << first.status().ToString();
  auto again = c->Complete(ca, CompleteRequest{});
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->refused_with(RefusalReason::kAlreadyApplied));
  EXPECT_EQ(again->refusal->outcome, "completed");
  EXPECT_TRUE(again->settled());

  // run_terminal: the run is cancelled while b runs.
  auto st = c->Started(cb);
  ASSERT_TRUE(st.ok() && st->applied) << st.status().ToString();
  ASSERT_TRUE(c->CancelRun(run).ok());
  auto terminal = c->Heartbeat(cb);
  ASSERT_TRUE(terminal.ok());
  EXPECT_TRUE(terminal->refused_with(RefusalReason::kRunTerminal));
}

TEST_F(RealCoordinatorTest, ACompleteWhoseAnswerIsLostIsRetriedAndSettlesOnce) {
  // A proxy that forwards to the coordinator, but loses the first complete's answer.
  httplib::Client upstream("127.0.0.1", std::stoi(coord_->url().substr(coord_->url().rfind(':') + 1)));
  std::atomic<int> completes{0};
  auto proxy = testing::HostileServer::Start([&](const RecordedRequest& r) {
    httplib::Headers headers{{"Authorization", r.Header("authorization")}};
    httplib::Result res = r.method == "GET" ? upstream.Get(r.target, headers)
                          : r.method == "PUT" ? upstream.Put(r.target, headers, r.body, r.Header("content-type"))
                                              : upstream.Post(r.target, headers, r.body, "application/json");
    if (!res) return Reply::Reset();
    if (r.path.size() > 9 && r.path.substr(r.path.size() - 9) == "/complete" && completes++ == 0) {
      return Reply::Drop();  // applied upstream; the worker never hears it
    }
    Reply reply = Reply::Json(res->status, res->body);
    return reply;
  });
  WorkerOptions o = WorkerOpts("proxied/1");
  o.client = Options(proxy->url());
  Served served(o);
  ASSERT_TRUE(served.worker()
                  .Register(WorkflowDefinition{"dropped", "1", {StepDefinition{"only", {}, {}, {}, {}, {}, {}, {}}}},
                            {{"only", [](StepContext&) { return StepResult::Output(R"({"ok":1})"); }}})
                  .ok());
  served.Start();
  auto client = NewClient();
  std::string run;
  for (int i = 0; i < 100 && run.empty(); ++i) {
    auto r = client->StartRun(RunCreateRequest{"dropped", std::nullopt, "{}", std::nullopt, std::nullopt});
    if (r.ok()) run = r->run_id;
    else std::this_thread::sleep_for(Millis(50));
  }
  ASSERT_FALSE(run.empty());
  auto reports = served.WaitFor(1);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].end, LeaseEnd::kCompleted);
  EXPECT_EQ(reports[0].detail, "already_applied");
  EXPECT_EQ(completes.load(), 2);
  EXPECT_TRUE(served.Stop().ok());
  auto journal = client->RunJournal(run);
  ASSERT_TRUE(journal.ok());
  int completed = 0;
  for (const auto& e : journal->events) completed += e.type == "attempt_completed";
  EXPECT_EQ(completed, 1);  // exactly-once recorded outcome
  EXPECT_EQ(client->ShowRun(run)->status, "completed");
}

TEST_F(RealCoordinatorTest, CancellingTheRunMidBodyCancelsTheBodyAndNothingMoreIsWritten) {
  Served served(WorkerOpts("cancel/1"));
  std::mutex mu;
  std::condition_variable cv;
  bool running = false;
  std::atomic<bool> saw_cancel{false};
  ASSERT_TRUE(served.worker()
                  .Register(WorkflowDefinition{"long", "1", {StepDefinition{"wait", {}, {}, {}, {}, {}, {}, {}}}},
                            {{"wait", [&](StepContext& ctx) {
                                {
                                  std::lock_guard<std::mutex> lock(mu);
                                  running = true;
                                }
                                cv.notify_all();
                                saw_cancel = ctx.cancellation().WaitFor(Millis(20000));
                                return StepResult::Output("{}");
                              }}})
                  .ok());
  served.Start();
  auto client = NewClient();
  std::string run;
  for (int i = 0; i < 100 && run.empty(); ++i) {
    auto r = client->StartRun(RunCreateRequest{"long", std::nullopt, "{}", std::nullopt, std::nullopt});
    if (r.ok()) run = r->run_id;
    else std::this_thread::sleep_for(Millis(50));
  }
  ASSERT_FALSE(run.empty());
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(20), [&] { return running; }));
  }
  ASSERT_TRUE(client->CancelRun(run).ok());
  auto reports = served.WaitFor(1);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_TRUE(saw_cancel.load());
  EXPECT_EQ(reports[0].end, LeaseEnd::kAbandoned);
  EXPECT_EQ(reports[0].lost, CancelReason::kRunTerminal);
  EXPECT_TRUE(served.Stop().ok());
  auto view = client->ShowRun(run);
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->status, "cancelled");
  auto journal = client->RunJournal(run);
  for (const auto& e : journal->events) {
    EXPECT_NE(e.type, "attempt_completed");
    EXPECT_NE(e.type, "attempt_failed");
  }
}

TEST_F(RealCoordinatorTest, TheWorkerHelloExampleServesOneStep) {
  auto example = ChildProcess::Spawn({SCIMESH_WORKER_HELLO_BIN, "--spool", spool_},
                                     {{"SCIMESH_URL", coord_->url()}, {"SCIMESH_TOKEN_FILE", coord_->token_file()}},
                                     spool_ + "/example.log");
  ASSERT_TRUE(example.ok());
  auto client = NewClient();
  std::string run;
  for (int i = 0; i < 200 && run.empty(); ++i) {
    auto r = client->StartRun(RunCreateRequest{"hello", std::nullopt, R"({"name":"mesh"})", std::nullopt, std::nullopt});
    if (r.ok()) run = r->run_id;
    else std::this_thread::sleep_for(Millis(50));  // the example has not registered yet
  }
  ASSERT_FALSE(run.empty());
  auto rc = (*example)->Wait(30000);
  ASSERT_TRUE(rc.has_value()) << "worker-hello did not exit";
  EXPECT_EQ(*rc, 0);
  auto view = client->ShowRun(run);
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->status, "completed");
  ASSERT_EQ(view->steps.size(), 1u);
  EXPECT_EQ(view->steps[0].output_json, R"({"greeting":"hello, mesh"})");
  ASSERT_EQ(view->steps[0].artifacts.size(), 1u);
  EXPECT_EQ(view->steps[0].artifacts[0].name, "greeting.txt");
}

}  // namespace
}  // namespace scimesh

// The launcher, scimesh-rank and the lease contract attacked from the
// attempt directory, against a coordinator test double (FakeCoordinator):
//  - a lease.json naming a listener of the step's choosing: the listener
//    receives nothing, the step runs against the configured coordinator;
//  - the step's program dumps its environment: no key in it, nor in any
//    file of the attempt directory;
//  - the step lists its descriptors: its stdio and nothing of the launcher's;
//  - a FIFO planted as lease.state: walltime is still enforced;
//  - the N-th heartbeat refused (fenced, run_terminal) while a body exits at
//    once on SIGTERM or ignores it: never a complete or fail afterwards,
//    over many repetitions (SCIMESH_RACE_REPS, default 50);
//  - a step killed by SIGTERM once SLURM signalled the allocation's end
//    (scancel): `preempted`, not the step's own `retryable` failure.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <thread>

#include <gtest/gtest.h>

#include "launcher/lease_engine.h"
#include "protocol/util/host_name.h"
#include "tests/client/fake_coordinator.h"
#include "tests/support/test_dir.h"

namespace scimesh::launcher {
namespace {

using scimesh::testing::CallOf;
using scimesh::testing::FakeCoordinator;
using scimesh::testing::RecordedRequest;
using scimesh::testing::Reply;

constexpr char kToken[] = "attack-test-key-9f8e7d6c5b4a";

// Counts TCP connections on a loopback port: the stand-in for a listener
// another user (or the step) controls.
class Listener {
 public:
  Listener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::listen(fd_, 16);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      while (!stop_) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, 50) == 1) {
          int c = ::accept(fd_, nullptr, nullptr);
          if (c >= 0) ::close(c);
          ++connections_;
        }
      }
    });
  }
  ~Listener() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int connections() const { return connections_.load(); }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::thread thread_;
};

class StepAttackTest : public ::testing::Test {
 protected:
  explicit StepAttackTest(int heartbeat_ms = 100) : fake_(kToken, /*lease_ttl_ms=*/2000, heartbeat_ms) {
    ::setenv("SCIMESH_TOKEN", kToken, 1);  // the launcher's key, inherited by what it spawns
    ::unsetenv("SCIMESH_TOKEN_FILE");
  }

  // Stands in for srun (the slurm backend's launch): drops srun's options,
  // runs `prelude` (shell, in the attempt directory, "$@" = -- argv), then
  // scimesh-rank with a 0.2 s kill grace. A single rank on the local backend
  // runs without scimesh-rank, so the wrapper's defences are tested here.
  std::string Wrapper(const std::string& prelude) {
    const std::string path = bin_ / ("fake-srun-" + std::to_string(++wrappers_));
    std::ofstream(path) << "#!/bin/sh\n"
                        << "while [ $# -gt 0 ]; do case \"$1\" in --*) shift ;; *) break ;; esac; done\n"
                        << "rank=$1; shift\n"
                        << prelude << "\nexec \"$rank\" --kill-grace 0.2 \"$@\"\n";
    ::chmod(path.c_str(), 0755);
    return path;
  }

  // Runs `lease` through the launcher's lease engine: `argv` under the fake
  // srun `wrapper`; with none, forked directly on the local backend.
  LeaseReport Run(const Lease& lease, std::vector<std::string> argv, const std::string& wrapper,
                  std::function<void()> allocation_ending = {}, const AllocationEnd* allocation_end = nullptr) {
    EngineConfig config;
    config.client.coordinator_url = fake_.url();
    config.client.token = Token(kToken);
    config.client.retry_budget = Millis(3000);
    config.setup = {"w-attack", spool_.path(), fake_.url()};
    config.launch.launch.backend = wrapper.empty() ? Backend::kLocal : Backend::kSlurm;
    config.launch.launch.srun = wrapper;
    config.launch.launch.rank_wrapper = SCIMESH_RANK_BIN;
    config.launch.launch.env = {{"SCIMESH_WORKER_ID", "w-attack"}, {"SCIMESH_URL", fake_.url()}};
    config.launch.kill_grace = std::chrono::milliseconds(200);
    config.launch.allocation_ending = std::move(allocation_ending);
    config.launch.allocation_end = allocation_end;
    config.threads = 2;
    auto engine = LeaseEngine::Create(std::move(config));
    EXPECT_TRUE(engine.ok()) << engine.status().ToString();
    if (!engine.ok()) return {};
    StepCommand command;
    command.argv = std::move(argv);
    command.mpi = "none";
    Placement placement;
    placement.nodes = {{HostName(), 1, {0}, {}}};
    placement.ranks = {{0, 0, {0}, {}, {}}};
    std::promise<LeaseReport> reported;
    (*engine)->Submit(lease, std::chrono::steady_clock::now(), &command, placement,
                      [&reported](const LeaseReport& r) { reported.set_value(r); });
    return reported.get_future().get();
  }

  std::string AttemptDir(const Lease& l) const {
    return spool_.path() + "/" + l.run_id + "/" + l.step_id + "/" + std::to_string(l.attempt);
  }

  FakeCoordinator fake_;
  TestDir spool_, bin_;
  int wrappers_ = 0;
};

TEST_F(StepAttackTest, APlantedCoordinatorUrlReceivesNothing) {
  Listener planted;
  Lease lease = fake_.MakeLease("planted");
  // What another user or an earlier step could have left: lease.json naming its listener.
  const std::string plant = "sed -i 's|" + fake_.url() + "|" + planted.url() + "|' lease.json";
  LeaseReport r = Run(lease, {"/bin/sh", "-c", "echo '{\"ok\":1}' > output.json"}, Wrapper(plant));
  EXPECT_EQ(planted.connections(), 0) << "the worker key went to the URL in lease.json";
  EXPECT_EQ(r.end, LeaseEnd::kCompleted) << r.detail;
  EXPECT_EQ(fake_.Outcome(lease.lease_id), "completed");
  std::ifstream err(AttemptDir(lease) + "/step.err");
  std::string text((std::istreambuf_iterator<char>(err)), {});
  EXPECT_NE(text.find("names a coordinator other than the configured one"), std::string::npos) << text;
}

TEST_F(StepAttackTest, TheStepsProgramHoldsNoKey) {
  Lease lease = fake_.MakeLease("envdump");
  LeaseReport r = Run(lease, {"/bin/sh", "-c", "env > env.txt; echo '{\"ok\":1}' > output.json"}, Wrapper(":"));
  ASSERT_EQ(r.end, LeaseEnd::kCompleted) << r.detail;
  std::ifstream env(AttemptDir(lease) + "/env.txt");
  std::string text((std::istreambuf_iterator<char>(env)), {});
  ASSERT_NE(text.find("SCIMESH_ATTEMPT_DIR="), std::string::npos) << "the dump did not run";
  EXPECT_EQ(text.find("SCIMESH_TOKEN"), std::string::npos) << text;
  for (const auto& e : std::filesystem::recursive_directory_iterator(AttemptDir(lease))) {
    if (!e.is_regular_file()) continue;
    std::ifstream f(e.path());
    std::string content((std::istreambuf_iterator<char>(f)), {});
    EXPECT_EQ(content.find(kToken), std::string::npos) << "the key is in " << e.path().filename();
  }
}

// The attack: a 2-rank step read the worker key from /proc/<mpirun>/environ.
// With a lease token, srun (here its stand-in) and every rank get no key:
// rank 0 heartbeats with the lease's own token from lease.json.
TEST_F(StepAttackTest, NoProcessOfTheStepHoldsTheKeyRank0UsesTheLeaseToken) {
  Lease lease = fake_.MakeLease("lease-token");
  ASSERT_FALSE(lease.lease_token.empty());
  LeaseReport r = Run(lease, {"/bin/sh", "-c", "sleep 0.5; echo '{\"ok\":1}' > output.json"},
                      Wrapper("env > srun-env.txt"));
  ASSERT_EQ(r.end, LeaseEnd::kCompleted) << r.detail;
  std::ifstream env(AttemptDir(lease) + "/srun-env.txt");
  std::string text((std::istreambuf_iterator<char>(env)), {});
  ASSERT_NE(text.find("SCIMESH_ATTEMPT_DIR="), std::string::npos) << "the dump did not run";
  EXPECT_EQ(text.find("SCIMESH_TOKEN"), std::string::npos) << "srun's environment holds the key: " << text;
  EXPECT_EQ(text.find(kToken), std::string::npos);
  int by_lease_token = 0;
  for (const RecordedRequest& q : fake_.server().requests()) {
    if (q.path == "/v1/api/steps/" + lease.lease_id + "/heartbeat" &&
        q.Header("authorization") == "Bearer " + lease.lease_token) {
      ++by_lease_token;
    }
  }
  EXPECT_GT(by_lease_token, 0) << "rank 0 did not heartbeat with the lease token";
}

// A coordinator that issues no lease token: rank 0 takes the lease over with
// the key, which then travels in srun's environment as before.
TEST_F(StepAttackTest, WithoutALeaseTokenRank0TakesTheLeaseOverWithTheKey) {
  Lease lease = fake_.MakeLease("no-lease-token");
  lease.lease_token.clear();
  LeaseReport r = Run(lease, {"/bin/sh", "-c", "echo '{\"ok\":1}' > output.json"}, Wrapper(":"));
  EXPECT_EQ(r.end, LeaseEnd::kCompleted) << r.detail;
}

// A single rank on the local backend is forked without scimesh-rank: the
// launcher itself keeps the key from it and binds it to its cpu.
TEST_F(StepAttackTest, ADirectlyForkedProgramHoldsNoKeyAndRunsOnItsCpu) {
  Lease lease = fake_.MakeLease("direct");
  LeaseReport r = Run(lease,
                      {"/bin/sh", "-c",
                       "env > env.txt; grep Cpus_allowed_list /proc/self/status > cpus.txt; "
                       "echo '{\"ok\":1}' > output.json"},
                      "");
  ASSERT_EQ(r.end, LeaseEnd::kCompleted) << r.detail;
  std::ifstream env(AttemptDir(lease) + "/env.txt");
  std::string text((std::istreambuf_iterator<char>(env)), {});
  ASSERT_NE(text.find("SCIMESH_ATTEMPT_DIR="), std::string::npos) << "the dump did not run";
  EXPECT_EQ(text.find("SCIMESH_TOKEN"), std::string::npos) << text;
  EXPECT_NE(text.find("OMP_PLACES={0}"), std::string::npos) << text;
  std::ifstream cpus(AttemptDir(lease) + "/cpus.txt");
  std::string line((std::istreambuf_iterator<char>(cpus)), {});
  EXPECT_NE(line.find(":\t0\n"), std::string::npos) << line;
}

// The attack: a step found the launcher's keep-alive connections to the
// coordinator among its descriptors. Forked directly, and through srun and
// scimesh-rank, a step holds its stdio and nothing else.
TEST_F(StepAttackTest, AStepHoldsOnlyItsStdio) {
  // ls lists its own: the three it was given, and 3, the listed directory.
  const std::vector<std::string> list = {"/bin/sh", "-c", "echo '{\"ok\":1}' > output.json; exec ls /proc/self/fd > fds.txt"};
  for (const std::string& wrapper : {std::string(), Wrapper(":")}) {
    Lease lease = fake_.MakeLease(wrapper.empty() ? "fds-direct" : "fds-wrapped");
    LeaseReport r = Run(lease, list, wrapper);
    ASSERT_EQ(r.end, LeaseEnd::kCompleted) << r.detail;
    std::ifstream fds(AttemptDir(lease) + "/fds.txt");
    std::string text((std::istreambuf_iterator<char>(fds)), {});
    EXPECT_EQ(text, "0\n1\n2\n3\n") << (wrapper.empty() ? "forked by the launcher" : "under srun and scimesh-rank");
  }
}

TEST_F(StepAttackTest, AFifoAsLeaseStateDoesNotStopTheWalltime) {
  Lease lease = fake_.MakeLease("fifo");
  lease.walltime_s = 2;
  // Plants a FIFO as lease.state over and over (each rename replaces it).
  LeaseReport r = Run(lease, {"/bin/sh", "-c", "while :; do rm -f lease.state; mkfifo lease.state; sleep 0.01; done"},
                      Wrapper("shift; exec \"$@\"  # no rank 0: only the launcher reads lease.state"));
  EXPECT_EQ(r.end, LeaseEnd::kFailed) << r.detail;
  ASSERT_EQ(r.fail_class, FailClass::kTimeout) << fake_.FailOf(lease.lease_id)->message;
}

// Found by tests/chaos: a job whose time limit came early is completing, and
// srun refuses every step at once; each lease failed `retryable`, spending
// the steps' budgets in a second while the launcher kept claiming. srun's
// refusal (here printed by the wrapper, which stands where srun does) fails
// the lease `preempted` and tells the launcher to drain.
TEST_F(StepAttackTest, SrunRefusingAnEndingJobPreemptsAndDrains) {
  Lease lease = fake_.MakeLease("ending");
  int drains = 0;
  LeaseReport r = Run(lease, {"/bin/true"},
                      Wrapper("echo 'srun: error: Unable to create step for job 41: Job/step already completing "
                              "or completed' >&2; exit 1"),
                      [&drains] { ++drains; });
  EXPECT_EQ(r.end, LeaseEnd::kFailed) << r.detail;
  ASSERT_EQ(r.fail_class, FailClass::kPreempted) << fake_.FailOf(lease.lease_id)->message;
  EXPECT_EQ(drains, 1);
}

// scancel: SLURM signals the launcher (batch step) and the step's tasks at
// once; the launcher marks the allocation's end while the step runs, then
// the step dies of SIGTERM. Requeued without spending an attempt.
TEST_F(StepAttackTest, AStepKilledAfterTheAllocationsEndIsPreempted) {
  Lease lease = fake_.MakeLease("scancelled");
  AllocationEnd end;
  std::thread slurm([&end] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    end.Mark();
  });
  LeaseReport r = Run(lease, {"/bin/sleep", "60"}, Wrapper("sleep 0.5; kill -TERM $$"), {}, &end);
  slurm.join();
  EXPECT_EQ(r.end, LeaseEnd::kFailed) << r.detail;
  ASSERT_EQ(r.fail_class, FailClass::kPreempted) << fake_.FailOf(lease.lease_id)->message;
  EXPECT_NE(fake_.FailOf(lease.lease_id)->message.find("signal 15"), std::string::npos)
      << "the message does not say how the step ended: " << fake_.FailOf(lease.lease_id)->message;
}

// The same death without the allocation ending is the step's own failure.
TEST_F(StepAttackTest, AStepKilledWhileTheAllocationLivesIsRetryable) {
  Lease lease = fake_.MakeLease("killed");
  AllocationEnd end;  // never marked
  LeaseReport r = Run(lease, {"/bin/sleep", "60"}, Wrapper("sleep 0.2; kill -TERM $$"), {}, &end);
  EXPECT_EQ(r.end, LeaseEnd::kFailed) << r.detail;
  ASSERT_EQ(r.fail_class, FailClass::kRetryable) << fake_.FailOf(lease.lease_id)->message;
}

int Reps() {
  const char* v = std::getenv("SCIMESH_RACE_REPS");
  return v != nullptr && std::atoi(v) > 0 ? std::atoi(v) : 50;
}

// Refuses every heartbeat from the `from`-th on with `reason` (a fenced lease
// stays fenced); counts the calls made after the first refusal.
void RefuseHeartbeatsFrom(FakeCoordinator& fake, int from, const std::string& reason) {
  auto beats = std::make_shared<std::atomic<int>>(0);
  fake.SetIntercept([beats, from, reason](const RecordedRequest& req) -> std::optional<Reply> {
    if (CallOf(req) != "heartbeat" || ++*beats < from) return std::nullopt;
    return Reply::Json(409, R"({"error":"conflict","reason":")" + reason + R"(","message":"refused by the test"})");
  });
}

void RaceAgainstRefusal(StepAttackTest* t, const std::string& reason, const std::string& program,
                        std::function<LeaseReport(const Lease&, std::vector<std::string>)> run,
                        FakeCoordinator& fake) {
  for (int i = 0; i < Reps(); ++i) {
    RefuseHeartbeatsFrom(fake, 2 + i % 3, reason);
    Lease lease = fake.MakeLease("race" + std::to_string(i));
    LeaseReport r = run(lease, {"/bin/sh", "-c", program});
    ASSERT_GT(fake.CallsFor(lease.lease_id, "heartbeat"), 1u) << "repetition " << i << ": no refusal happened";
    ASSERT_EQ(fake.CallsFor(lease.lease_id, "complete"), 0u) << "repetition " << i;
    ASSERT_EQ(fake.CallsFor(lease.lease_id, "fail"), 0u) << "repetition " << i << ": " << r.detail;
    EXPECT_EQ(r.end, LeaseEnd::kAbandoned) << "repetition " << i << ": " << r.detail;
  }
  (void)t;
}

// Heartbeats every 50 ms: a repetition lasts a few beats and the grace.
class LeaseRaceTest : public StepAttackTest, public ::testing::WithParamInterface<std::tuple<const char*, bool>> {
 protected:
  LeaseRaceTest() : StepAttackTest(/*heartbeat_ms=*/50) {}
};

TEST_P(LeaseRaceTest, NothingIsReportedAfterTheRefusal) {
  const auto [reason, ignores_term] = GetParam();
  const std::string program = ignores_term ? "trap '' TERM; while :; do sleep 0.05; done" : "exec sleep 60";
  const std::string wrapper = Wrapper(":");
  RaceAgainstRefusal(this, reason, program,
                     [&](const Lease& l, std::vector<std::string> argv) { return Run(l, std::move(argv), wrapper); },
                     fake_);
}

INSTANTIATE_TEST_SUITE_P(Refusals, LeaseRaceTest,
                         ::testing::Combine(::testing::Values("fenced", "run_terminal"), ::testing::Bool()),
                         [](const auto& param_info) {
                           return std::string(std::get<0>(param_info.param)) +
                                  (std::get<1>(param_info.param) ? "_BodyIgnoresSigterm" : "_BodyExitsOnSigterm");
                         });

}  // namespace
}  // namespace scimesh::launcher

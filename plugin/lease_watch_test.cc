// The watcher thread against a real lease state file and a fake step signaller.
#include "plugin/lease_watch.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "protocol/attempt/lease_state.h"
#include "tests/support/test_dir.h"

namespace scimesh::spank {
namespace {

using namespace std::chrono_literals;

int64_t NowMs() {
  struct timespec ts {};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1000000;
}

std::string Host() {
  char b[256] = {};
  ::gethostname(b, sizeof b - 1);
  return b;
}

struct Signals {
  std::mutex mu;
  std::vector<int> sent;
  std::vector<int64_t> sent_ms;  // CLOCK_MONOTONIC ms of each
  int failures_left = 0;
  sigset_t sender_mask{};  // the signal mask of the thread that sent the last one
  Status Send(int sig) {
    std::lock_guard l(mu);
    pthread_sigmask(SIG_SETMASK, nullptr, &sender_mask);
    if (failures_left > 0) {
      --failures_left;
      return Status::Unavailable("slurmctld busy");
    }
    sent.push_back(sig);
    sent_ms.push_back(NowMs());
    return Status::Ok();
  }
  std::vector<int> Get() {
    std::lock_guard l(mu);
    return sent;
  }
  std::vector<int64_t> Times() {
    std::lock_guard l(mu);
    return sent_ms;
  }
  // Awaits `n` signals (a condition, not a sleep): fails after 10 s.
  bool AwaitCount(size_t n) {
    for (auto end = std::chrono::steady_clock::now() + 10s; std::chrono::steady_clock::now() < end;) {
      if (Get().size() >= n) return true;
      std::this_thread::sleep_for(5ms);
    }
    return false;
  }
};

class LeaseWatchTest : public ::testing::Test {
 protected:
  void WriteState(LeaseHold hold, int64_t deadline_ms, std::optional<CancelReason> reason = {}) {
    LeaseState s;
    s.lease_id = "l_0c8e51d2a4b94f17";
    s.attempt = 1;
    s.holder = LeaseHolder::kRank0;
    s.host = Host();
    s.pid = 1;
    s.state = hold;
    s.reason = reason;
    s.seq = ++seq_;
    s.deadline_mono_ms = deadline_ms;
    s.lease_expires_at = "2026-11-29T08:00:41.300Z";
    ASSERT_TRUE(WriteLeaseState(dir_ / "lease.state", s).ok());
  }
  WatchSpec Spec(std::chrono::seconds grace, std::chrono::milliseconds owner_cancel_grace = 10s) {
    WatchSpec spec;
    spec.lease_id = "l_0c8e51d2a4b94f17";
    spec.attempt = 1;
    spec.lease_ttl_ms = 30000;
    spec.host = Host();
    spec.owner = {::getuid(), ::getgid()};
    spec.poll = 20ms;
    spec.grace = grace;
    spec.owner_cancel_grace = owner_cancel_grace;
    spec.signal_retry_delay = 10ms;
    return spec;
  }
  std::unique_ptr<LeaseWatch> Start(std::chrono::seconds grace, std::chrono::milliseconds owner_cancel_grace = 10s) {
    WatchSpec spec = Spec(grace, owner_cancel_grace);
    auto dir = OpenOwnedDirectory(dir_.path(), spec.owner, "attempt directory");
    EXPECT_TRUE(dir.ok());
    auto w = LeaseWatch::Start(spec, std::move(dir).value(), [this](int sig) { return signals_.Send(sig); });
    EXPECT_TRUE(w.ok());
    return std::move(w).value();
  }
  TestDir dir_;
  Signals signals_;
  int64_t seq_ = 0;
};

TEST_F(LeaseWatchTest, HeldLeaseIsLeftAlone) {
  WriteState(LeaseHold::kHeld, NowMs() + 60000);
  auto w = Start(0s);
  // Let it read the state several times, then stop it: nothing was sent.
  WriteState(LeaseHold::kHeld, NowMs() + 60000);
  EXPECT_TRUE(w->Stop(5s));
  EXPECT_FALSE(w->cancelled());
  EXPECT_TRUE(signals_.Get().empty());
}

TEST_F(LeaseWatchTest, LostLeaseSendsTermThenKillAfterTheGrace) {
  WriteState(LeaseHold::kHeld, NowMs() + 60000);
  auto w = Start(1s);
  WriteState(LeaseHold::kLost, NowMs() + 60000, CancelReason::kFenced);
  ASSERT_TRUE(signals_.AwaitCount(2));
  EXPECT_EQ(signals_.Get(), (std::vector<int>{SIGTERM, SIGKILL}));
  EXPECT_TRUE(w->cancelled());
  EXPECT_NE(w->why().find("fenced"), std::string::npos);
  EXPECT_GT(w->cancel_sent_ms(), 0);
  EXPECT_TRUE(w->Stop(5s));
}

TEST_F(LeaseWatchTest, DeadlinePassedWithoutRenewalCancels) {
  WriteState(LeaseHold::kHeld, NowMs() + 150);  // the holder hangs: never rewritten
  auto w = Start(0s);
  ASSERT_TRUE(signals_.AwaitCount(1));
  EXPECT_EQ(signals_.Get(), (std::vector<int>{SIGKILL}));
  EXPECT_NE(w->why().find("deadline"), std::string::npos);
}

TEST_F(LeaseWatchTest, StopDuringTheGraceKillsAtOnce) {
  WriteState(LeaseHold::kLost, NowMs(), CancelReason::kFenced);
  auto w = Start(std::chrono::seconds(600));
  ASSERT_TRUE(signals_.AwaitCount(1));
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(w->Stop(5s));  // the step ended on SIGTERM here; other nodes may not have
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  EXPECT_EQ(signals_.Get(), (std::vector<int>{SIGTERM, SIGKILL}));
}

// A fenced lease is signalled at once, whatever the owner-cancel grace.
TEST_F(LeaseWatchTest, FencedLeaseIsSignalledAtOnce) {
  WriteState(LeaseHold::kHeld, NowMs() + 60000);
  auto w = Start(1s, std::chrono::seconds(600));
  const int64_t lost_at = NowMs();
  WriteState(LeaseHold::kLost, NowMs() + 60000, CancelReason::kFenced);
  ASSERT_TRUE(signals_.AwaitCount(1));
  EXPECT_EQ(signals_.Get().front(), SIGTERM);
  EXPECT_LT(signals_.Times().front() - lost_at, 5000);
}

// The run's owner cancelled it (run_terminal): the ranks see cancelled();
// SIGTERM only after the owner-cancel grace, SIGKILL that long after.
TEST_F(LeaseWatchTest, RunCancelledByItsOwnerIsSignalledOnlyAfterItsGrace) {
  WriteState(LeaseHold::kHeld, NowMs() + 60000);
  auto w = Start(0s, 700ms);
  const int64_t lost_at = NowMs();
  WriteState(LeaseHold::kLost, NowMs() + 60000, CancelReason::kRunTerminal);
  ASSERT_TRUE(signals_.AwaitCount(2));
  EXPECT_EQ(signals_.Get(), (std::vector<int>{SIGTERM, SIGKILL}));
  const auto at = signals_.Times();
  EXPECT_GE(at[0] - lost_at, 700) << "SIGTERM before the grace was over";
  EXPECT_GE(at[1] - at[0], 700) << "SIGKILL before the grace after SIGTERM was over";
  EXPECT_TRUE(w->cancelled());
  EXPECT_NE(w->why().find("run_terminal"), std::string::npos) << w->why();
}

// ... and a step that ends on its own within that grace gets no signal.
TEST_F(LeaseWatchTest, RunCancelledByItsOwnerEndingWithinItsGraceGetsNoSignal) {
  WriteState(LeaseHold::kLost, NowMs(), CancelReason::kRunTerminal);
  auto w = Start(1s, std::chrono::seconds(600));
  for (auto end = std::chrono::steady_clock::now() + 10s; !w->cancelled() && std::chrono::steady_clock::now() < end;) {
    std::this_thread::sleep_for(5ms);
  }
  ASSERT_TRUE(w->cancelled()) << "the watcher never saw the loss";
  std::this_thread::sleep_for(200ms);  // a signal sent at once would be here by now
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(w->Stop(5s));  // slurm_spank_exit: the step ended
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  EXPECT_TRUE(signals_.Get().empty());
}

TEST_F(LeaseWatchTest, SignalFailuresAreRetried) {
  signals_.failures_left = 2;
  WriteState(LeaseHold::kLost, NowMs(), CancelReason::kExpired);
  auto w = Start(0s);
  ASSERT_TRUE(signals_.AwaitCount(1));
  EXPECT_EQ(signals_.Get(), (std::vector<int>{SIGKILL}));
}

TEST_F(LeaseWatchTest, DoneStopsWatchingWithoutSignals) {
  WriteState(LeaseHold::kDone, 0);
  auto w = Start(0s);
  EXPECT_TRUE(w->Stop(5s));
  EXPECT_FALSE(w->cancelled());
  EXPECT_TRUE(signals_.Get().empty());
}

TEST_F(LeaseWatchTest, WatcherThreadBlocksSignals) {
  // The watcher runs with every signal blocked; this thread's mask is as it was.
  sigset_t before, after;
  pthread_sigmask(SIG_SETMASK, nullptr, &before);
  WriteState(LeaseHold::kHeld, NowMs() + 60000);
  auto w = Start(0s);
  pthread_sigmask(SIG_SETMASK, nullptr, &after);
  for (int sig : {SIGTERM, SIGUSR1, SIGCHLD, SIGALRM}) EXPECT_EQ(sigismember(&before, sig), sigismember(&after, sig));
  WriteState(LeaseHold::kLost, NowMs() + 60000, CancelReason::kFenced);
  ASSERT_TRUE(signals_.AwaitCount(1));  // sent from the watcher's thread
  std::lock_guard l(signals_.mu);
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2, SIGCHLD, SIGALRM, SIGPIPE}) {
    EXPECT_EQ(sigismember(&signals_.sender_mask, sig), 1) << "the watcher may receive " << strsignal(sig);
  }
}

// A stand-in for slurmctld that stalls every slurm_kill_job_step up to 10 s
// (until released), then fails: what a slow controller does to the watcher.
struct StallingSlurmctld {
  std::mutex mu;
  std::condition_variable cv;
  bool released = false;
  int calls = 0;
  Status Kill(int /*sig*/) {
    std::unique_lock l(mu);
    ++calls;
    cv.notify_all();
    cv.wait_for(l, 10s, [this] { return released; });
    return Status::Unavailable("slurmctld: socket timed out");
  }
  bool AwaitCalls(int n) {
    std::unique_lock l(mu);
    return cv.wait_for(l, 10s, [&] { return calls >= n; });
  }
  void Release() {
    std::lock_guard l(mu);
    released = true;
    cv.notify_all();
  }
  int Calls() {
    std::lock_guard l(mu);
    return calls;
  }
};

TEST_F(LeaseWatchTest, StoppedWhileSlurmctldStallsReturnsAndFreesNothingInUse) {
  WriteState(LeaseHold::kLost, NowMs(), CancelReason::kFenced);
  auto slurmctld = std::make_shared<StallingSlurmctld>();
  auto in_use = std::make_shared<int>(0);  // lives exactly as long as the watcher's state
  std::weak_ptr<int> watcher_state = in_use;
  WatchSpec spec = Spec(0s);
  spec.signal_tries = 3;
  auto dir = OpenOwnedDirectory(dir_.path(), spec.owner, "attempt directory");
  ASSERT_TRUE(dir.ok());
  auto w = LeaseWatch::Start(spec, std::move(dir).value(),
                             [slurmctld, in_use = std::move(in_use)](int sig) { return slurmctld->Kill(sig); });
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(slurmctld->AwaitCalls(1));  // SIGKILL sent; slurmctld stalls
  // slurm_spank_exit: stop within its bound, then free the watcher, while
  // its thread is still inside slurm_kill_job_step.
  EXPECT_FALSE((*w)->Stop(100ms));
  EXPECT_TRUE((*w)->cancelled());
  w->reset();
  slurmctld->Release();  // the call returns into the thread: its state must be alive (ASan)
  for (auto end = std::chrono::steady_clock::now() + 10s;
       !watcher_state.expired() && std::chrono::steady_clock::now() < end;) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_TRUE(watcher_state.expired()) << "the thread never ended";
  EXPECT_EQ(slurmctld->Calls(), 1) << "a kill retried after stop was asked";
}

}  // namespace
}  // namespace scimesh::spank

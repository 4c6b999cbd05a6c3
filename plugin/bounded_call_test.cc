// RunWithin: a hook never waits on a stalled call past its bound.
#include "plugin/bounded_call.h"

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

namespace scimesh::spank {
namespace {

using namespace std::chrono_literals;

TEST(BoundedCall, AQuickCallIsWaitedFor) {
  std::atomic<int> ran{0};
  EXPECT_TRUE(RunWithin([&ran] { ran = 1; }, 5s));
  EXPECT_EQ(ran.load(), 1);
}

// slurmstepd's signals never reach the call's thread.
TEST(BoundedCall, TheCallsThreadBlocksEverySignal) {
  sigset_t mask;
  sigemptyset(&mask);
  EXPECT_TRUE(RunWithin([&mask] { pthread_sigmask(SIG_SETMASK, nullptr, &mask); }, 5s));
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGCHLD, SIGALRM, SIGPIPE}) EXPECT_EQ(sigismember(&mask, sig), 1) << sig;
  sigset_t mine;
  pthread_sigmask(SIG_SETMASK, nullptr, &mine);
  EXPECT_EQ(sigismember(&mine, SIGTERM), 0) << "the caller's mask is its own again";
}

TEST(BoundedCall, AStalledCallIsLeftBehindWithItsOwnState) {
  struct Gate {
    std::mutex mu;
    std::condition_variable cv;
    bool open = false, done = false;
  };
  auto gate = std::make_shared<Gate>();
  // The call holds its own reference: it may outlive this scope safely.
  EXPECT_FALSE(RunWithin(
      [gate] {
        std::unique_lock l(gate->mu);
        gate->cv.wait_for(l, 10s, [&] { return gate->open; });
        gate->done = true;
        gate->cv.notify_all();
      },
      50ms));
  std::unique_lock l(gate->mu);
  EXPECT_FALSE(gate->done);
  gate->open = true;
  gate->cv.notify_all();
  EXPECT_TRUE(gate->cv.wait_for(l, 10s, [&] { return gate->done; }));
}

}  // namespace
}  // namespace scimesh::spank

// Which failed steps the allocation's end took, and which failed on their own.
#include "launcher/allocation_end.h"

#include <signal.h>

#include <thread>

#include <gtest/gtest.h>

namespace scimesh::launcher {
namespace {

using namespace std::chrono_literals;

const ExitInfo kTerminated{true, SIGTERM};
const ExitInfo kSrunTerminated{false, 128 + SIGTERM};
const ExitInfo kExit3{false, 3};
const ExitInfo kSuccess{false, 0};

TEST(AllocationEnd, FailuresBeforeAnyEndAreTheSteps) {
  AllocationEnd end;
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(end.EndedTheStep(kExit3, 2s));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s) << "an exit status waited for a signal";
  EXPECT_FALSE(end.EndedTheStep(kTerminated, 100ms));
  EXPECT_FALSE(end.EndedTheStep(kSrunTerminated, 100ms));
}

TEST(AllocationEnd, FailuresAfterTheEndAreTheAllocations) {
  AllocationEnd end;
  end.Mark();
  EXPECT_TRUE(end.marked());
  EXPECT_TRUE(end.EndedTheStep(kTerminated));
  EXPECT_TRUE(end.EndedTheStep(kSrunTerminated));
  EXPECT_TRUE(end.EndedTheStep(kExit3));  // a rank that died of it made its peers exit
  EXPECT_TRUE(end.EndedTheStep(ExitInfo{true, SIGKILL}));
  EXPECT_FALSE(end.EndedTheStep(kSuccess)) << "a success is never a failure";
}

// SLURM signalled the step a moment before the launcher.
TEST(AllocationEnd, ASignalDeathJustBeforeTheEndIsTheAllocations) {
  AllocationEnd end;
  std::thread slurm([&end] {
    std::this_thread::sleep_for(100ms);
    end.Mark();
  });
  EXPECT_TRUE(end.EndedTheStep(kSrunTerminated, 10s));
  slurm.join();
}

TEST(AllocationEnd, ASignalDeathWaitsOnlyTheRace) {
  AllocationEnd end;
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(end.EndedTheStep(kTerminated, 200ms));
  const auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(waited, 200ms);
  EXPECT_LT(waited, 5s);
}

// sinfo's view when SLURM ended a job for a dead node: the node is "down*"
// (down and not responding); another job's node may be down too.
TEST(AllocationEnd, DeadNodesAreOursThatAreDownOrFailing) {
  const char* sinfo = "n1 mix\nn2 down*\nn3 fail\nn4 down\nn5 idle*\n";
  EXPECT_EQ(DeadNodesIn(sinfo, {"n1", "n2", "n3"}), (std::vector<std::string>{"n2", "n3"}));
  EXPECT_TRUE(DeadNodesIn(sinfo, {"n1", "n5"}).empty());  // not responding is not yet down
  EXPECT_TRUE(DeadNodesIn("", {"n1"}).empty());
}

TEST(AllocationEnd, AStepOnADeadNodeIsNamed) {
  AllocationEnd end;
  end.SetDeadNodes({"n2"});
  end.Mark();
  EXPECT_EQ(end.DeadNodeOf({"n1", "n2"}), "n2");
  EXPECT_EQ(end.DeadNodeOf({"n1"}), "");
}

}  // namespace
}  // namespace scimesh::launcher

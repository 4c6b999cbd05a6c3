// The lease state file: format, atomic rewrites, no writes through symlinks.
#include "protocol/attempt/lease_state.h"

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <thread>

#include <gtest/gtest.h>

#include "tests/support/test_dir.h"

namespace scimesh {
namespace {

LeaseState Sample() {
  LeaseState s;
  s.lease_id = "l_0c8e51d2a4b94f17";
  s.attempt = 1;
  s.holder = LeaseHolder::kRank0;
  s.host = "n1";
  s.pid = 4242;
  s.seq = 17;
  s.deadline_mono_ms = 183442117;
  s.lease_expires_at = "2026-11-29T08:00:41.300Z";
  return s;
}

TEST(LeaseStateFile, MatchesTheDocumentedFormat) {
  // docs/protocol.md "Local files", byte for byte.
  EXPECT_EQ(SerializeLeaseState(Sample()),
            R"({"lease_id":"l_0c8e51d2a4b94f17","attempt":1,"holder":"rank0","host":"n1",)"
            R"("pid":4242,"state":"held","reason":null,"seq":17,)"
            R"("deadline_mono_ms":183442117,"lease_expires_at":"2026-11-29T08:00:41.300Z"})");
  LeaseState lost = Sample();
  lost.state = LeaseHold::kLost;
  lost.reason = CancelReason::kRunTerminal;
  auto back = ParseLeaseState(SerializeLeaseState(lost));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->state, LeaseHold::kLost);
  EXPECT_EQ(back->reason, CancelReason::kRunTerminal);
}

TEST(LeaseStateFile, ReasonExactlyWhenLost) {
  EXPECT_FALSE(ParseLeaseState(R"({"lease_id":"l","attempt":1,"holder":"rank0","host":"n","pid":1,"state":"lost",)"
                               R"("reason":null,"seq":1,"deadline_mono_ms":1,"lease_expires_at":""})").ok());
  EXPECT_FALSE(ParseLeaseState(R"({"lease_id":"l","attempt":1,"holder":"rank0","host":"n","pid":1,"state":"held",)"
                               R"("reason":"fenced","seq":1,"deadline_mono_ms":1,"lease_expires_at":""})").ok());
  EXPECT_FALSE(ParseLeaseState(R"({"lease_id":"l","attempt":1,"holder":"rank0","host":"n","pid":1,"state":"lost",)"
                               R"("reason":"shutdown","seq":1,"deadline_mono_ms":1,"lease_expires_at":""})").ok());
}

TEST(LeaseStateFile, ReadersNeverSeeATornWrite) {
  TestDir dir;
  const std::string path = dir / "lease.state";
  LeaseState s = Sample();
  ASSERT_TRUE(WriteLeaseState(path, s).ok());
  std::atomic<bool> done{false};
  std::atomic<int> torn{0}, reads{0};
  std::thread reader([&] {
    while (!done) {
      auto r = ReadLeaseState(path);
      ++reads;
      if (!r.ok()) ++torn;
    }
  });
  for (int i = 0; i < 2000; ++i) {
    s.seq = i;
    s.lease_expires_at = std::string(static_cast<size_t>(i % 50), 'x');  // sizes vary: a torn write would show
    ASSERT_TRUE(WriteLeaseState(path, s).ok());
  }
  done = true;
  reader.join();
  EXPECT_EQ(torn.load(), 0) << "of " << reads.load() << " reads";
  EXPECT_EQ(ReadLeaseState(path)->seq, 1999);
  // No temporary files left behind.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 1);
}

TEST(LeaseStateFile, AReplacedSymlinkIsNotFollowed) {
  TestDir dir;
  const std::string outside = dir / "outside.txt";
  TestDir::Write(outside, "precious");
  std::filesystem::create_symlink(outside, dir / "lease.state");
  ASSERT_TRUE(WriteLeaseState(dir / "lease.state", Sample()).ok());
  EXPECT_EQ(TestDir::Read(outside), "precious");
  EXPECT_FALSE(std::filesystem::is_symlink(dir / "lease.state"));
  EXPECT_TRUE(ReadLeaseState(dir / "lease.state").ok());
}

TEST(LeaseStateRules, DeadlineCountsOnlyOnTheHostThatMeasuredIt) {
  LeaseState s;
  s.host = "n1";
  s.deadline_mono_ms = 5000;
  ASSERT_TRUE(DeadlineOnHost(s, "n1").has_value());
  EXPECT_EQ(DeadlineOnHost(s, "n1")->at(), MonoTime(std::chrono::milliseconds(5000)));
  EXPECT_FALSE(DeadlineOnHost(s, "n2").has_value());
  s.deadline_mono_ms = 0;
  EXPECT_FALSE(DeadlineOnHost(s, "n1").has_value());
  // A planted reading past what the clock holds is the far future (UBSan
  // checks that no conversion overflows).
  for (int64_t huge : {int64_t{1} << 50, std::numeric_limits<int64_t>::max()}) {
    s.deadline_mono_ms = huge;
    ASSERT_TRUE(DeadlineOnHost(s, "n1").has_value());
    EXPECT_FALSE(DeadlineOnHost(s, "n1")->PassedAt(SteadyClock().Now()));
  }
}

TEST(LeaseStateRules, TakeOverAndHandBack) {
  LeaseState s;
  s.holder = LeaseHolder::kRank0;
  s.seq = 7;
  EXPECT_TRUE(HeldBy(s, LeaseHolder::kRank0));
  EXPECT_FALSE(HeldBy(s, LeaseHolder::kWorker));
  LeaseState back = HandedBack(s, LeaseHolder::kWorker, 42);
  EXPECT_TRUE(HeldBy(back, LeaseHolder::kWorker));
  EXPECT_EQ(back.seq, 8);
  EXPECT_EQ(back.pid, 42);
  s.state = LeaseHold::kLost;
  EXPECT_FALSE(HeldBy(s, LeaseHolder::kRank0));
  EXPECT_FALSE(ParseLeaseHolder("root").has_value());
}

}  // namespace
}  // namespace scimesh

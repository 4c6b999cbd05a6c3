// SIGTERM while workers hold claims, and while they claim again at once on
// the same connection when a claim is answered (a launcher does exactly that
// when the coordinator stops and answers its held claim empty): the
// coordinator always exits 0, and the next start opens its database.
#include <csignal>
#include <vector>

#include "coordinator_fixture.h"
#include "raw_connection.h"

namespace scimesh::coordinator::testing {
namespace {

class CleanStop : public CoordinatorTest {
 protected:
  // `held` connections each hold a claim; the answer to one is met with the
  // next claim on the same connection, until the coordinator is gone. Then
  // the exit status of SIGTERM.
  int StopHolding(size_t held) {
    const std::string claim = PostRequest("/v1/api/steps/claim", process_->token("w1"),
                                          R"({"worker_id":"w-stop","max":1,"wait_ms":60000})");
    std::vector<RawConnection> conns;
    for (size_t i = 0; i < held; ++i) {
      conns.emplace_back(process_->port());
      if (!conns.back().ok() || !conns.back().Send(claim)) ADD_FAILURE() << "connection " << i;
    }
    // Time for the claims to be read and held (not asserted: fewer held
    // still makes a valid round).
    std::this_thread::sleep_for(std::chrono::milliseconds(20 + held / 5));
    ::kill(process_->pid(), SIGTERM);
    // Re-claim on every answer while the coordinator stops.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (bool open = held > 0; open && std::chrono::steady_clock::now() < until;) {
      open = false;
      for (RawConnection& c : conns) {
        if (c.closed()) continue;
        if (c.Poll().find("HTTP/1.1 ") != std::string::npos) c.Send(claim);
        open = open || !c.closed();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return process_->Terminate();
  }
  void Rounds(size_t held, int rounds) {
    RegisterOrDie(*w1_, "w-stop", Definitions("stop", R"([{"id":"a"}])"));
    for (int round = 0; round < rounds && !HasFailure(); ++round) {
      const int rc = StopHolding(held);
      EXPECT_EQ(rc, 0) << "round " << round << " with " << held << " held claims: the coordinator exited " << rc
                       << "\n" << process_->log().substr(process_->log().size() > 2000 ? process_->log().size() - 2000 : 0);
      ASSERT_EQ(process_->Start(), "") << "round " << round << ": the database does not open again";
    }
  }
};

TEST_F(CleanStop, WithNoHeldClaims) { Rounds(0, 50); }
TEST_F(CleanStop, WithOneHeldClaimThatClaimsAgain) { Rounds(1, 50); }
TEST_F(CleanStop, WithFiveHundredHeldClaimsThatClaimAgain) { Rounds(500, 50); }

}  // namespace
}  // namespace scimesh::coordinator::testing

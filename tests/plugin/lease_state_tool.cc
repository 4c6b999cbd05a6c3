// Test helper: writes a lease state file the way a heartbeating rank 0 would
// (atomically, through protocol/lease_state.h), or prints CLOCK_MONOTONIC ms.
//
//   lease_state_tool now
//   lease_state_tool write DIR LEASE_ID ATTEMPT HOST held|done|lost:REASON SEQ DEADLINE_IN_MS
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "protocol/attempt/lease_state.h"
#include "protocol/util/cancellation.h"

namespace {

int64_t NowMs() {
  struct timespec ts {};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1000000;
}

int Usage() {
  std::fprintf(stderr, "usage: lease_state_tool now | write DIR LEASE_ID ATTEMPT HOST STATE SEQ DEADLINE_IN_MS\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace scimesh;
  if (argc == 2 && std::string(argv[1]) == "now") {
    std::printf("%lld\n", static_cast<long long>(NowMs()));
    return 0;
  }
  if (argc != 9 || std::string(argv[1]) != "write") return Usage();
  LeaseState s;
  s.lease_id = argv[3];
  s.attempt = std::atoll(argv[4]);
  s.holder = LeaseHolder::kRank0;
  s.host = argv[5];
  s.pid = 1;
  std::string state = argv[6];
  if (state == "held") {
    s.state = LeaseHold::kHeld;
  } else if (state == "done") {
    s.state = LeaseHold::kDone;
  } else if (state.rfind("lost:", 0) == 0) {
    s.state = LeaseHold::kLost;
    std::string reason = state.substr(5);
    for (auto r : {CancelReason::kFenced, CancelReason::kRunTerminal, CancelReason::kExpired}) {
      if (CancelReasonName(r) == reason) s.reason = r;
    }
    if (!s.reason) return Usage();
  } else {
    return Usage();
  }
  s.seq = std::atoll(argv[7]);
  s.deadline_mono_ms = NowMs() + std::atoll(argv[8]);
  s.lease_expires_at = "2026-11-29T08:00:41.300Z";
  Status st = WriteLeaseState(std::string(argv[2]) + "/lease.state", s);
  if (!st.ok()) {
    std::fprintf(stderr, "lease_state_tool: %s\n", st.message().c_str());
    return 1;
  }
  return 0;
}

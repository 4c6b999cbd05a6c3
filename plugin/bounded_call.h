// Running a blocking call (slurmctld, the coordinator) from a SPANK hook
// without letting it hold the hook past its bound.
//
// Thread-safe free function.
#pragma once

#include <chrono>
#include <functional>

namespace scimesh::spank {

// Runs `call` on a thread of its own (every signal blocked, as slurmstepd
// expects of its threads) and waits up to `bound` for it. True when it
// ended in time. Otherwise the thread is detached: `call` owns everything
// it uses (capture by value), and the module is pinned (PinThisModule) so
// the thread never returns into unloaded code; it ends with the call or with
// the process.
bool RunWithin(std::function<void()> call, std::chrono::milliseconds bound);

}  // namespace scimesh::spank

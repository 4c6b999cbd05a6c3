// StartQuietThread: a thread inside slurmstepd that no signal reaches.
//
// A thread inherits its creator's signal mask; slurmstepd's signals (SIGTERM
// to a step, SIGCHLD, SIGALRM) must go to slurmstepd's own threads, never to
// one of the plugin's. Both of the plugin's threads start here.
#pragma once

#include <functional>
#include <thread>

#include "protocol/util/status.h"

namespace scimesh::spank {

// Starts `body` on a new thread with every signal blocked; the calling
// thread's mask is the same before and after. Never throws: kInternal when
// no thread can be started. Thread-safe.
Result<std::thread> StartQuietThread(std::function<void()> body);

}  // namespace scimesh::spank

// RunLease: one lease from claim to final report, by the worker rules, on
// the calling thread (worker.cc). The halves are LeaseSession's.
//
// `client` and `beat_client` are used only by this thread (and the lease's
// heartbeat thread) until it returns.
#pragma once

#include "protocol/client/client.h"
#include "protocol/runtime/lease_session.h"
#include "protocol/runtime/worker.h"

namespace scimesh {

// `body` null: this worker does not hold the lease's definition (unservable).
LeaseReport RunLease(const Lease& lease, MonoTime claim_sent_at, const StepBody* body, Client& client,
                     Client& beat_client, const LeaseRunSetup& setup);

}  // namespace scimesh

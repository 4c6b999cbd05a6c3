// RunLease: one lease from claim to final report, by the worker rules.
// Worker-internal (worker.cc); separate so the sequence reads top to bottom.
//
// Runs on the calling thread; `client` and `beat_client` are used only by
// this thread (and the lease's heartbeat thread) until it returns.
#pragma once

#include <string>

#include "protocol/client.h"
#include "protocol/worker.h"

namespace scimesh {

struct LeaseRunSetup {
  std::string worker_id;
  std::string spool_dir;
  std::string coordinator_url;
};

// `body` null: this worker does not hold the lease's definition (unservable).
LeaseReport RunLease(const Lease& lease, MonoTime claim_sent_at, const StepBody* body, Client& client,
                     Client& beat_client, const LeaseRunSetup& setup);

}  // namespace scimesh

// One lease by the worker rules on the calling thread: LeaseSession's halves
// with the body called between them.
#include "protocol/runtime/lease_runner.h"

#include <chrono>

#include "protocol/runtime/heartbeat_loop.h"

namespace scimesh {
namespace {

StepResult CallBody(const StepBody& body, StepContext& ctx) {
  // The body is user code: nothing it throws may cross into the worker.
  try {
    return body(ctx);
  } catch (const std::exception& e) {
    return StepResult::Fatal(e.what());
  } catch (...) {
    return StepResult::Fatal("the step body threw a non-standard exception");
  }
}

}  // namespace

LeaseReport RunLease(const Lease& lease, MonoTime claim_sent_at, const StepBody* body, Client& client,
                     Client& beat_client, const LeaseRunSetup& setup) {
  auto heartbeats = [&beat_client](HeartbeatConfig config, std::shared_ptr<CancellationToken> token) {
    return std::unique_ptr<HeartbeatControl>(
        std::make_unique<HeartbeatLoop>(beat_client, std::move(config), std::move(token)));
  };
  LeaseSession session(lease, claim_sent_at, setup, heartbeats);
  if (!session.Begin(client, body != nullptr)) return session.report();
  const MonoTime t0 = std::chrono::steady_clock::now();
  StepResult result = CallBody(*body, session.context());
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return session.Finish(client, result, wall_s);
}

}  // namespace scimesh

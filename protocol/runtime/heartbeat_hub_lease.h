// HubLease: one lease kept alive by a HeartbeatHub: its HeartbeatState (the
// rules HeartbeatLoop follows too) and the beat the hub's thread is making;
// and HubHandle, the HeartbeatControl the lease's owner holds.
//
// Internal to libscimesh_protocol. A HubLease's state is guarded by its `mu`;
// the fields marked "hub thread" are touched only by the hub's thread (with
// `mu` held). Lock order: a lease's mu, then the hub's mu (Poke); the hub's
// thread never takes a lease's mu while holding the hub's.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "protocol/client/http_exchange.h"
#include "protocol/runtime/heartbeat_control.h"
#include "protocol/runtime/heartbeat_state.h"

namespace scimesh {

struct HubCore;

struct HubLease {
  HubLease(const Clock& clock, HeartbeatConfig config, std::shared_ptr<CancellationToken> token)
      : st(clock, std::move(config), std::move(token)) {}

  // What the hub's thread does next for this lease: wait for the next beat
  // (kIdle), for a free connection (kQueued), for an answer (kInFlight), or
  // for the next try (kBackoff).
  enum class Phase { kIdle, kQueued, kInFlight, kBackoff };

  std::mutex mu;
  HeartbeatState st;     // guarded by mu
  bool started = false;  // guarded by mu

  // Hub thread: the beat being made.
  Phase phase = Phase::kIdle;
  LeaseDeadline deadline;  // bounds this beat's tries
  // Built at the first beat and kept: every beat of the lease (and every try)
  // sends the same request; only the body changes, when progress comes or goes.
  std::string name;  // "heartbeat l_..."
  HttpRequest request;
  bool progress_in_body = false;
  int tries = 0;
  MonoTime retry_at;
  CURL* easy = nullptr;  // in flight on the hub's multi handle
  std::unique_ptr<HttpExchange> exchange;
  uint64_t timer = 0;  // the hub's id of this lease's pending timer
};

// The owner's side of a HubLease. Destruction Stop()s.
class HubHandle final : public HeartbeatControl {
 public:
  HubHandle(std::shared_ptr<HubLease> lease, std::shared_ptr<HubCore> core);
  ~HubHandle() override;
  HubHandle(const HubHandle&) = delete;
  HubHandle& operator=(const HubHandle&) = delete;

  Status Start() override;
  void Extend(const LeaseExtension& extension) override;
  void SetProgress(std::string progress_json) override;
  LeaseDeadline deadline() const override;
  int64_t beats() const override;
  void Pause() override;
  void Resume(std::optional<LeaseDeadline> deadline) override;
  void HoldAlone() override;
  void Stop() override;
  void MarkDone() override;
  void MarkLost(CancelReason reason) override;

 private:
  const std::shared_ptr<HubLease> lease_;
  const std::shared_ptr<HubCore> core_;
};

}  // namespace scimesh

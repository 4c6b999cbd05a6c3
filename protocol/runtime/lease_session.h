// LeaseSession: one lease by the worker rules, in two halves, for a worker
// whose body is not one blocking call (the launcher's event loop runs the
// step's processes between them):
//   Begin()  -- unservable check, attempt dir, heartbeats, verified inputs,
//               `started`; everything before the body;
//   Finish() -- output check, confirmed uploads, then complete or fail.
// RunLease (lease_runner.h) is Begin, the body, Finish on one thread.
//
// Thread-safety: Begin and Finish are called one after the other, each
// from any one thread (never at once); context() is valid from a Begin that
// returned true until the session is destroyed. The Client passed to each
// half is used only during that call.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "protocol/attempt/attempt_dir.h"
#include "protocol/client/client.h"
#include "protocol/runtime/heartbeat_control.h"
#include "protocol/runtime/step_context.h"
#include "protocol/runtime/worker.h"
#include "protocol/util/cancellation.h"

namespace scimesh {

struct LeaseRunSetup {
  std::string worker_id;
  std::string spool_dir;
  std::string coordinator_url;
};

// Builds the lease's heartbeat keeper (a HeartbeatLoop on its own Client, or
// a handle of a shared heartbeat hub).
using HeartbeatFactory =
    std::function<std::unique_ptr<HeartbeatControl>(HeartbeatConfig config, std::shared_ptr<CancellationToken> token)>;

class LeaseSession {
 public:
  LeaseSession(Lease lease, MonoTime claim_sent_at, LeaseRunSetup setup, HeartbeatFactory heartbeats);
  ~LeaseSession();
  LeaseSession(const LeaseSession&) = delete;
  LeaseSession& operator=(const LeaseSession&) = delete;

  // Blocking. True: the body may run now (context()). False: the lease is
  // over (failed, abandoned or unreported): report() says how.
  // `servable` false: this worker does not hold the lease's definition.
  bool Begin(Client& client, bool servable);

  StepContext& context() { return *ctx_; }
  const Lease& lease() const { return lease_; }
  bool cancelled() const { return token_ && token_->cancelled(); }

  // Blocking; once, after Begin() returned true. `wall_s`: how long the body
  // ran (usage wall_s unless the body set it).
  LeaseReport Finish(Client& client, const StepResult& result, double wall_s);

  const LeaseReport& report() const { return report_; }

 private:
  // Why the step's artifacts exceed the lease's artifact_quota; "" when they fit.
  std::string OverArtifactQuota() const;
  // The class a failed upload fails the lease with.
  static FailClass UploadFailClass(const Status& upload);
  LeaseCall Call() const;
  void StopLoop();
  bool SendStarted();
  LeaseReport Fail(FailClass cls, const std::string& message);
  template <typename T>
  LeaseReport Final(const Result<LeaseReply<T>>& r, LeaseEnd end, std::optional<FailClass> cls);
  LeaseReport Refused(const Refusal& refusal, LeaseEnd settled_as);
  LeaseReport Lost(CancelReason reason, const std::string& detail);
  LeaseReport Abandon();

  const Lease lease_;
  const LeaseRunSetup setup_;
  const HeartbeatFactory heartbeats_;
  const MonoTime claim_sent_at_;
  const LeaseDeadline first_deadline_;
  LeaseCall call_;
  Client* client_ = nullptr;  // the half in progress
  std::optional<AttemptDir> dir_;
  std::shared_ptr<CancellationToken> token_;
  std::unique_ptr<HeartbeatControl> loop_;
  std::unique_ptr<StepContext> ctx_;
  bool started_ = false;
  LeaseReport report_;
};

}  // namespace scimesh

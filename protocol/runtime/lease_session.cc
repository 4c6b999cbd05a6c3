// One lease by the worker rules, in halves: unservable check, attempt dir,
// heartbeats, verified inputs, started | body | output check, confirmed
// uploads, then complete or fail.
#include "protocol/runtime/lease_session.h"

#include <sys/stat.h>

#include "protocol/attempt/step_output.h"
#include "protocol/util/json_io.h"
#include "protocol/util/log.h"
#include "protocol/wire/fail_message.h"

namespace scimesh {
namespace {

std::shared_ptr<spdlog::logger> Log() { return log::For("worker"); }

std::string UsageJson(const std::map<std::string, double>& usage, double wall_s) {
  return ObjectText([&](JsonWriter& w) {
    if (usage.find("wall_s") == usage.end()) {
      w.Key("wall_s");
      w.Double(wall_s);
    }
    for (const auto& [key, value] : usage) {
      w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
      w.Double(value);
    }
  });
}

}  // namespace

LeaseSession::LeaseSession(Lease lease, MonoTime claim_sent_at, LeaseRunSetup setup, HeartbeatFactory heartbeats)
    : lease_(std::move(lease)), setup_(std::move(setup)), heartbeats_(std::move(heartbeats)),
      claim_sent_at_(claim_sent_at),
      first_deadline_(LeaseDeadline::FromTtl(claim_sent_at, Millis(lease_.lease_ttl_ms))) {
  call_ = {lease_.lease_id, lease_.attempt, setup_.worker_id, first_deadline_};
  report_.lease_id = lease_.lease_id;
  report_.run_id = lease_.run_id;
  report_.step_id = lease_.step_id;
  report_.attempt = lease_.attempt;
}

LeaseSession::~LeaseSession() {
  ctx_.reset();  // it refers to the loop and the directory
  StopLoop();
}

bool LeaseSession::Begin(Client& client, bool servable) {
  client_ = &client;
  if (!servable) {
    Fail(FailClass::kUnservable, "worker " + setup_.worker_id + " does not hold " + lease_.workflow + "/" +
                                     lease_.version + " step " + lease_.step_id);
    return false;
  }
  auto dir = AttemptDir::Open(setup_.spool_dir, lease_);
  if (!dir.ok()) {
    Fail(FailClass::kRetryable, "attempt directory: " + dir.status().message());
    return false;
  }
  dir_.emplace(std::move(*dir));
  if (Status s = dir_->WriteLeaseJson(lease_, setup_.coordinator_url); !s.ok()) {
    Fail(FailClass::kRetryable, "lease.json: " + s.message());
    return false;
  }
  token_ = std::make_shared<CancellationToken>();
  HeartbeatConfig hb{call_, Millis(lease_.heartbeat_ms), first_deadline_, claim_sent_at_,
                     lease_.lease_expires_at, dir_->state_path(), LeaseHolder::kWorker,
                     /*yields_to=*/LeaseHolder::kRank0};  // a launched MPI step's rank 0 takes heartbeating over
  loop_ = heartbeats_(std::move(hb), token_);
  if (!loop_) {
    Fail(FailClass::kRetryable, "no heartbeat keeper for the lease");
    return false;
  }
  if (Status s = loop_->Start(); !s.ok()) {
    Fail(FailClass::kRetryable, s.message());
    return false;
  }

  // Inputs first: a body never runs on bytes that do not match their SHA-256.
  for (const auto& a : lease_.input_artifacts) {
    if (token_->cancelled()) return Abandon(), false;
    auto fd = dir_->CreateInputTemp(a.step_id, a.name);
    if (!fd.ok()) return Fail(FailClass::kRetryable, "input " + a.name + ": " + fd.status().message()), false;
    auto got = client.DownloadArtifact(a, fd->get(), loop_->deadline());
    if (!got.ok()) {
      dir_->DiscardInput(a.step_id, a.name);
      if (token_->cancelled()) return Abandon(), false;
      if (got.status().code() == Code::kDataLoss) return Fail(FailClass::kInputChecksum, got.status().message()), false;
      return Fail(FailClass::kRetryable, got.status().message()), false;
    }
    if (Status s = dir_->CommitInput(a.step_id, a.name); !s.ok()) return Fail(FailClass::kRetryable, s.message()), false;
  }
  if (token_->cancelled()) return Abandon(), false;
  if (!SendStarted()) return false;
  ctx_ = std::make_unique<StepContext>(lease_, *dir_, *loop_, token_);
  report_.body_ran = true;
  return true;
}

LeaseReport LeaseSession::Finish(Client& client, const StepResult& result, double wall_s) {
  client_ = &client;
  // Lost while the body ran: it was told to stop, and nothing more is written.
  if (token_->cancelled()) return Abandon();
  if (result.error_class()) return Fail(*result.error_class(), result.message());
  if (!result.has_output()) return Fail(FailClass::kInvalidOutput, "the step produced no output (empty result)");
  auto output = CheckStepOutput(*result.output());
  if (!output.ok()) return Fail(FailClass::kInvalidOutput, output.status().message());

  // Within the lease's quota, or nothing uploaded at all.
  if (std::string over = OverArtifactQuota(); !over.empty()) return Fail(FailClass::kInvalidOutput, over);
  // Every upload confirmed before complete, or no complete at all.
  std::vector<ArtifactRef> refs;
  for (const auto& a : ctx_->artifacts()) {
    auto fd = dir_->OpenArtifact(a.name);
    if (!fd.ok()) return Fail(FailClass::kInvalidOutput, "declared artifact " + a.name + ": " + fd.status().message());
    auto up = client.UploadArtifact(Call(), a.name, fd->get(), a.media_type);
    if (token_->cancelled()) return Abandon();
    if (!up.ok()) return Fail(UploadFailClass(up.status()), "upload of " + a.name + " failed: " + up.status().message());
    if (up->refusal) return Refused(*up->refusal, LeaseEnd::kCompleted);
    refs.push_back(*up->applied);
  }

  CompleteRequest req;
  req.output_json = *output;
  req.state_patch_json = ctx_->state_patch();
  req.usage_json = UsageJson(ctx_->usage(), wall_s);
  req.artifacts = std::move(refs);
  auto done = client.Complete(Call(), std::move(req));
  return Final(done, LeaseEnd::kCompleted, std::nullopt);
}

std::string LeaseSession::OverArtifactQuota() const {
  const ArtifactQuota& quota = lease_.artifact_quota;
  const auto& artifacts = ctx_->artifacts();
  if (static_cast<int64_t>(artifacts.size()) > quota.count) {
    return "the step left " + std::to_string(artifacts.size()) + " artifacts; this lease may upload at most " +
           std::to_string(quota.count) + " (its artifact_quota), so none was uploaded";
  }
  if (quota.bytes <= 0) return "";
  int64_t bytes = 0;
  for (const auto& a : artifacts) {
    auto fd = dir_->OpenArtifact(a.name);
    struct stat st {};
    if (fd.ok() && ::fstat(fd->get(), &st) == 0) bytes += st.st_size;
  }
  if (bytes <= quota.bytes) return "";
  return "the step's artifacts hold " + std::to_string(bytes) + " bytes; this lease may upload at most " +
         std::to_string(quota.bytes) + " (its artifact_quota), so none was uploaded";
}

FailClass LeaseSession::UploadFailClass(const Status& upload) {
  switch (upload.code()) {
    case Code::kResourceExhausted: return FailClass::kStorageFull;  // 507 until the deadline: no attempt spent
    case Code::kInvalidArgument: return FailClass::kInvalidOutput;  // 413, a bad name or media type: the step's
    default: return FailClass::kRetryable;
  }
}

LeaseCall LeaseSession::Call() const {
  LeaseCall c = call_;
  if (loop_) c.deadline = loop_->deadline();
  return c;
}

void LeaseSession::StopLoop() {
  if (loop_) loop_->Stop();
}

// `started`, always before the body; false when the lease is given up.
bool LeaseSession::SendStarted() {
  auto r = client_->Started(Call());
  if (!r.ok()) {
    StopLoop();
    if (token_ && token_->cancelled()) {
      Abandon();
      return false;
    }
    if (loop_) loop_->MarkLost(CancelReason::kExpired);
    report_.end = LeaseEnd::kUnreported;
    report_.detail = "started could not be delivered: " + r.status().ToString();
    Log()->error("lease {}: {}", lease_.lease_id, report_.detail);
    return false;
  }
  if (r->refusal) {
    Refused(*r->refusal, LeaseEnd::kUnreported);
    return false;
  }
  if (loop_) loop_->Extend(*r->applied);
  started_ = true;
  return true;
}

LeaseReport LeaseSession::Fail(FailClass cls, const std::string& message) {
  // An at_most_once attempt may only be failed once started (or the
  // coordinator answers not_started); the body still never runs.
  if (!started_ && lease_.delivery == Delivery::kAtMostOnce && !SendStarted()) return report_;
  // Logged as sent: no stack trace, no full local path here either.
  const std::string sent = SanitizeFailMessage(message);
  Log()->warn("lease {} (step {}, attempt {}): fail {}: {}", lease_.lease_id, lease_.step_id, lease_.attempt,
              FailClassName(cls), sent);
  auto r = client_->Fail(Call(), cls, sent);
  return Final(r, LeaseEnd::kFailed, cls);
}

template <typename T>
LeaseReport LeaseSession::Final(const Result<LeaseReply<T>>& r, LeaseEnd end, std::optional<FailClass> cls) {
  StopLoop();
  if (!r.ok()) {
    report_.end = LeaseEnd::kUnreported;
    report_.detail = r.status().ToString();
    Log()->error("lease {}: the final report could not be delivered: {}", lease_.lease_id, report_.detail);
    return report_;
  }
  if (r->settled()) {
    if (loop_) loop_->MarkDone();
    report_.end = end;
    report_.fail_class = cls;
    report_.detail = r->applied ? "applied" : "already_applied";
    Log()->info("lease {} (step {}, attempt {}): {}{}", lease_.lease_id, lease_.step_id, lease_.attempt,
                end == LeaseEnd::kCompleted ? "completed" : "failed",
                r->applied ? "" : " (already applied)");
    return report_;
  }
  return Refused(*r->refusal, end);
}

// Each reason by name.
LeaseReport LeaseSession::Refused(const Refusal& refusal, LeaseEnd settled_as) {
  StopLoop();
  switch (refusal.reason) {
    case RefusalReason::kAlreadyApplied:
      // The outcome is recorded already: success, and nothing more is written.
      if (loop_) loop_->MarkDone();
      report_.end = refusal.outcome == "failed" ? LeaseEnd::kFailed : settled_as;
      report_.detail = "already_applied";
      return report_;
    case RefusalReason::kFenced:
      return Lost(CancelReason::kFenced, refusal.message);
    case RefusalReason::kRunTerminal:
      return Lost(CancelReason::kRunTerminal, refusal.message);
    case RefusalReason::kNotStarted:
      // Logged loudly by the client; a bug in this worker, never retried.
      if (loop_) loop_->MarkLost(CancelReason::kNotStarted);
      report_.end = LeaseEnd::kUnreported;
      report_.lost = CancelReason::kNotStarted;
      report_.detail = "not_started: " + refusal.message;
      return report_;
  }
  return report_;
}

LeaseReport LeaseSession::Lost(CancelReason reason, const std::string& detail) {
  if (token_) token_->Cancel(reason);
  if (loop_) loop_->MarkLost(reason);
  report_.end = LeaseEnd::kAbandoned;
  report_.lost = reason;
  report_.detail = detail;
  Log()->warn("lease {} (step {}, attempt {}) abandoned: {}", lease_.lease_id, lease_.step_id, lease_.attempt,
              CancelReasonName(reason));
  return report_;
}

// The heartbeat loop found the lease lost: write nothing more.
LeaseReport LeaseSession::Abandon() {
  StopLoop();
  const CancelReason reason = token_->reason().value_or(CancelReason::kExpired);
  if (reason == CancelReason::kAlreadyApplied) {
    report_.end = LeaseEnd::kUnreported;
    report_.detail = "already_applied on heartbeat: another reporter closed the attempt";
    return report_;
  }
  return Lost(reason, "lost while working");
}

}  // namespace scimesh

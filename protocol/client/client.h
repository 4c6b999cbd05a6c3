// Client: the typed worker calls of docs/protocol.md over one HTTP session,
// with the retry, timeout and redirect rules of "Client rules".
//
// Thread-safety: a Client is used by ONE thread at a time (it owns one libcurl
// handle, reused for connection reuse). Give every thread its own Client;
// only Interrupt()/ClearInterrupt() may be called from another thread.
//
// Failure: calls return Result. A Status with kUnavailable or kTimeout means
// the coordinator could not be reached within the retry budget; other codes
// say the coordinator refused the call (kInvalidArgument 400/413,
// kPermissionDenied 401/403 or a redirect, kNotFound 404) or answered
// something the contract does not allow (kInvalidArgument naming the field).
// A 409 on a lease call is not an error: it is a LeaseReply whose `refusal`
// names the reason, and the caller handles each reason by name.
//
// Retries are safe because every call is idempotent per (lease, attempt,
// worker_id): a retried or resent `complete` whose first copy was applied
// comes back as 409 already_applied, which LeaseReply::settled() counts as
// success. This also covers libcurl silently resending a POST on a reused
// connection that turned out to be dead.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include "protocol/client/http_session.h"
#include "protocol/util/backoff.h"
#include "protocol/util/clock.h"
#include "protocol/util/sha256.h"
#include "protocol/util/status.h"
#include "protocol/util/token.h"
#include "protocol/util/url.h"
#include "protocol/wire/lease_deadline.h"
#include "protocol/wire/wire.h"

namespace scimesh {

struct ClientOptions {
  std::string coordinator_url;  // "https://coord:8470"; "/v1/api" is appended
  Token token;
  bool allow_insecure_http = false;  // plain http to a non-loopback host
  bool insecure_tls = false;         // do not verify TLS certificates (--insecure)
  std::string ca_file;
  Millis connect_timeout{5000};
  Millis call_timeout{30000};  // one try of any call but claim and artifact transfers
  Millis claim_margin{10000};  // a claim try may take wait_ms + this
  // Artifact transfers: no total timeout, but abort when slower than
  // low_speed_bytes per second for low_speed_time.
  int64_t low_speed_bytes = 1024;
  std::chrono::seconds low_speed_time{30};
  BackoffPolicy backoff;
  Millis retry_budget{120000};  // calls not tied to a lease deadline
  size_t max_response_bytes = 64u << 20;
  int max_redirects = 5;  // artifact downloads only
  std::string user_agent = "libscimesh_protocol/0.1";
  // The monotonic clock of deadlines, heartbeat cadence, retry budgets and
  // the send time of each request (nullptr: SteadyClock()); tests pass a
  // ManualClock. Sleeps between retries are real time.
  const Clock* clock = nullptr;
};

// Identifies a lease call. `deadline` (the lease's local deadline) bounds the
// retries; without one the retry budget applies.
struct LeaseCall {
  std::string lease_id;
  int64_t attempt = 0;
  std::string worker_id;
  std::optional<LeaseDeadline> deadline;
};

// A 409: the call was refused with one of the four reasons.
struct Refusal {
  RefusalReason reason = RefusalReason::kFenced;
  std::string message;
  std::optional<std::string> outcome;  // with already_applied: "completed" or "failed"
};

// The answer to a lease call: applied (with the response) or refused.
// Exactly one of the two is set.
template <typename T>
struct LeaseReply {
  std::optional<T> applied;
  std::optional<Refusal> refusal;

  bool refused_with(RefusalReason r) const { return refusal && refusal->reason == r; }
  // Applied now, or applied before (already_applied): success either way.
  bool settled() const { return applied.has_value() || refused_with(RefusalReason::kAlreadyApplied); }
};

// A started/heartbeat response with the local deadline it grants.
struct LeaseExtension {
  ExtendResponse response;
  MonoTime sent_at;        // when the successful request was sent
  LeaseDeadline deadline;  // sent_at + lease_ttl_ms
};

struct ClaimResult {
  ClaimResponse response;
  MonoTime sent_at;  // the leases' first deadlines: sent_at + lease.lease_ttl_ms
};

class Client {
 public:
  // The clock of deadlines and retry budgets (ClientOptions::clock).
  const Clock& clock() const { return ClockOr(options_.clock); }

  // Checks the URL against the transport policy (https, or http to loopback
  // unless allow_insecure_http).
  static Result<std::unique_ptr<Client>> Create(ClientOptions options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // `budget`: how long to keep retrying this call (default: retry_budget).
  Result<RegisterResponse> Register(const RegisterRequest& request, std::optional<Millis> budget = {});
  // Long poll: one try may take wait_ms + claim_margin; no low-speed abort.
  Result<ClaimResult> Claim(const ClaimRequest& request, std::optional<Millis> budget = {});

  // GET /v1/api/demand (scope worker): the queued work per step of the
  // workflows this key serves; `query.workflows` empty: all of them. More
  // than kMaxDemandWorkflows names is refused here. A reply with more than
  // kMaxDemandGroups groups, a count or name out of the rules, or malformed
  // JSON is an error (kInvalidArgument naming the field), never retried.
  Result<QueuedDemand> Demand(const DemandQuery& query);

  // Each try is bounded by the lease deadline: past it the lease is lost anyway.
  Result<LeaseReply<LeaseExtension>> Started(const LeaseCall& call);
  Result<LeaseReply<LeaseExtension>> Heartbeat(const LeaseCall& call,
                                               const std::optional<std::string>& progress_json = {});
  // worker_id and attempt of `request` are taken from `call`.
  Result<LeaseReply<CompleteResponse>> Complete(const LeaseCall& call, CompleteRequest request);
  // `message` is sanitised (first line, no paths, no secrets, 4 KiB) here.
  Result<LeaseReply<FailResponse>> Fail(const LeaseCall& call, FailClass error_class, std::string_view message);

  // Uploads `fd` (from offset 0 to its end) as artifact `name`, declaring its
  // SHA-256; checks the coordinator's returned name, sha256 and size
  // (kDataLoss on a mismatch).
  Result<LeaseReply<ArtifactRef>> UploadArtifact(const LeaseCall& call, std::string_view name, int fd,
                                                 std::string_view media_type);

  // Downloads `artifact` into `fd` (truncated first), hashing while streaming;
  // kDataLoss unless size and SHA-256 match the lease's. Follows up to
  // max_redirects redirects; the token goes only to the coordinator's own
  // scheme, host and port.
  Result<FileDigest> DownloadArtifact(const InputArtifact& artifact, int fd,
                                      std::optional<LeaseDeadline> deadline = {});

  // Run API (scope execute; read for the list, show and journal).
  Result<RunStatus> StartRun(const RunCreateRequest& request);
  Result<RunView> ShowRun(std::string_view run_id);
  // GET /v1/api/runs with the query's parameters (those set).
  Result<RunList> ListRuns(const RunListQuery& query);
  Result<Journal> RunJournal(std::string_view run_id);
  Result<RunStatus> CancelRun(std::string_view run_id);

  // Makes the call in progress (and every later one, until ClearInterrupt)
  // return kCancelled promptly. Thread-safe.
  void Interrupt();
  void ClearInterrupt();

  const Url& coordinator() const { return base_; }

 private:
  Client(ClientOptions options, Url base, std::unique_ptr<HttpSession> session);

  // The outcome of one try for the retry loop.
  using Try = std::function<Result<HttpResponse>(Millis try_cap)>;
  // Runs `once` until it is not retryable or the budget is spent. A retry
  // budget is spent in full (the last try is made at its end); with
  // `bound_tries` budget_end is a lease deadline: each try is capped at the
  // time left, and the retries end when the next wait would pass it. A
  // failure is logged as a warning once; the same failure again, at debug.
  Result<HttpResponse> WithRetries(std::string_view what, MonoTime budget_end, bool bound_tries, const Try& once);
  Result<HttpResponse> Call(std::string_view what, const std::string& method, const std::string& path,
                            std::string body, Millis timeout, MonoTime budget_end, bool bound_tries);
  Result<LeaseReply<LeaseExtension>> Extend(std::string_view what, const LeaseCall& call,
                                            const std::optional<std::string>& progress_json);
  MonoTime BudgetEnd(const std::optional<LeaseDeadline>& deadline) const;
  MonoTime RetryBudgetEnd(std::optional<Millis> budget) const;
  bool SleepUnlessInterrupted(Millis d);

  ClientOptions options_;
  Url base_;
  std::unique_ptr<HttpSession> session_;
  std::mt19937_64 rng_;
  std::mutex mu_;  // for the interruptible sleep only
  std::condition_variable cv_;
};

// "POST /v1/api/steps/claim answered 400 bad_request on 'max': ..." from an
// error response; the Status code follows the HTTP status. Exposed for tests.
Status StatusFromErrorResponse(std::string_view what, const HttpResponse& response);

}  // namespace scimesh

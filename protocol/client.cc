// Client: typed calls, the retry loop and the mapping of HTTP answers to values.
#include "protocol/client.h"

#include "protocol/fail_message.h"
#include "protocol/log.h"
#include "protocol/wire_json.h"

namespace scimesh {
namespace {

std::shared_ptr<spdlog::logger> Log() { return log::For("client"); }

// No total timeout for artifact transfers: the low-speed abort guards them.
constexpr Millis kTransferTimeout = std::chrono::hours(24);

Millis Since(MonoTime t) {
  return std::chrono::duration_cast<Millis>(std::chrono::steady_clock::now() - t);
}

template <typename T>
Result<T> Expect2xx(std::string_view what, const Result<HttpResponse>& r, Result<T> (*parse)(std::string_view)) {
  if (!r.ok()) return r.status();  // WithRetries named `what` once already
  if (r->status / 100 != 2) return StatusFromErrorResponse(what, *r);
  auto v = parse(r->body);
  if (!v.ok()) return v.status().WithContext(std::string(what) + ": unexpected response");
  return v;
}

}  // namespace

Status StatusFromErrorResponse(std::string_view what, const HttpResponse& response) {
  const std::string head = std::string(what) + " answered " + std::to_string(response.status);
  if (response.status / 100 == 3) {
    return Status::PermissionDenied(head + ": a redirect; coordinator calls never follow redirects");
  }
  std::string detail;
  auto body = ParseErrorBody(response.body);
  if (body.ok()) {
    detail = body->error;
    if (body->reason) detail += " (" + *body->reason + ")";
    if (body->field) detail += " on '" + *body->field + "'";
    if (!body->message.empty()) detail += ": " + body->message.substr(0, 512);
  } else {
    detail = "without the documented error body";  // never echo an arbitrary body
  }
  const std::string m = head + " " + detail;
  switch (response.status) {
    case 401: case 403: return Status::PermissionDenied(m);
    case 404: return Status::NotFound(m);
    case 409: return Status::Conflict(m);
    case 429: return Status::Unavailable(m);
    default: break;
  }
  if (response.status >= 500) return Status::Unavailable(m);
  if (response.status >= 400) return Status::InvalidArgument(m);
  return Status::Internal(m + " (an unexpected status)");
}

Client::Client(ClientOptions options, Url base, std::unique_ptr<HttpSession> session)
    : options_(std::move(options)), base_(std::move(base)), session_(std::move(session)),
      rng_(std::random_device{}()) {}

Client::~Client() = default;

Result<std::unique_ptr<Client>> Client::Create(ClientOptions options) {
  while (!options.coordinator_url.empty() && options.coordinator_url.back() == '/') {
    options.coordinator_url.pop_back();
  }
  auto url = ParseUrl(options.coordinator_url);
  if (!url.ok()) return url.status().WithContext("coordinator URL");
  SCIMESH_RETURN_IF_ERROR(CheckTransportPolicy(*url, options.allow_insecure_http));
  HttpSessionOptions so;
  so.connect_timeout = options.connect_timeout;
  so.insecure_tls = options.insecure_tls;
  so.ca_file = options.ca_file;
  so.user_agent = options.user_agent;
  SCIMESH_ASSIGN_OR_RETURN(auto session, HttpSession::Create(std::move(so)));
  return std::unique_ptr<Client>(new Client(std::move(options), std::move(*url), std::move(session)));
}

void Client::Interrupt() {
  session_->Interrupt();
  std::lock_guard<std::mutex> lock(mu_);
  cv_.notify_all();
}

void Client::ClearInterrupt() { session_->ClearInterrupt(); }

bool Client::SleepUnlessInterrupted(Millis d) {
  std::unique_lock<std::mutex> lock(mu_);
  return !cv_.wait_for(lock, d, [&] { return session_->interrupted(); });
}

std::string Client::ApiUrl(const std::string& path) const {
  return options_.coordinator_url + "/v1/api" + path;
}

MonoTime Client::BudgetEnd(const std::optional<LeaseDeadline>& deadline) const {
  if (deadline) return deadline->at();
  return std::chrono::steady_clock::now() + options_.retry_budget;
}

Result<HttpResponse> Client::WithRetries(std::string_view what, MonoTime budget_end, bool bound_tries,
                                         const Try& once) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int n = 1;; ++n) {
    if (session_->interrupted()) return Status::Cancelled(std::string(what) + ": interrupted");
    Millis cap = kTransferTimeout;
    if (bound_tries) {
      const auto left = std::chrono::duration_cast<Millis>(budget_end - std::chrono::steady_clock::now());
      if (left <= Millis(0)) return Status::Timeout(std::string(what) + ": the lease deadline passed");
      cap = left;
    }
    auto r = once(cap);
    Status failure;
    Millis wait = BackoffDelay(options_.backoff, n, unit(rng_));
    if (!r.ok()) {
      const Code code = r.status().code();
      if (code != Code::kUnavailable && code != Code::kTimeout) return r.status().WithContext(what);
      failure = r.status().WithContext(what);
    } else if (r->status >= 500 || r->status == 429) {
      failure = StatusFromErrorResponse(what, *r);
      if (auto after = ParseRetryAfter(r->Header("retry-after"), std::chrono::system_clock::now())) {
        wait = std::max(wait, *after);  // the server knows better when to come back
      }
    } else {
      Log()->debug("{} answered {} in {} ms", what, r->status, Since(r->sent_at).count());
      return r;
    }
    if (std::chrono::steady_clock::now() + wait >= budget_end) {
      // Every failure names `what` once; the tries go at the end.
      Log()->warn("giving up after {} tries: {}", n, failure.ToString());
      return Status(failure.code(), failure.message() + " (after " + std::to_string(n) + " tries)");
    }
    Log()->warn("{}; retry {} in {} ms", failure.ToString(), n, wait.count());
    if (!SleepUnlessInterrupted(wait)) return Status::Cancelled(std::string(what) + ": interrupted");
  }
}

Result<HttpResponse> Client::Call(std::string_view what, const std::string& method, const std::string& path,
                                  std::string body, Millis timeout, MonoTime budget_end, bool bound_tries) {
  HttpRequest req;
  req.method = method;
  req.url = ApiUrl(path);
  req.headers = {"Content-Type: application/json", "Accept: application/json"};
  if (!options_.token.empty()) req.bearer = &options_.token.secret();
  req.body = std::move(body);
  req.max_body_bytes = options_.max_response_bytes;
  return WithRetries(what, budget_end, bound_tries, [&](Millis cap) {
    req.timeout = std::min(timeout, cap);
    return session_->Perform(req);
  });
}

template <typename T>
Result<LeaseReply<T>> Client::LeaseAnswer(std::string_view what, const Result<HttpResponse>& r,
                                          Result<T> (*parse)(std::string_view)) {
  if (r.ok() && r->status == 409) {
    auto body = ParseErrorBody(r->body);
    std::optional<RefusalReason> reason;
    if (body.ok() && body->reason) reason = ParseRefusalReason(*body->reason);
    if (!reason) {
      return Status::InvalidArgument(std::string(what) + " answered 409 without one of the four reasons");
    }
    Refusal refusal{*reason, body->message.substr(0, 512), body->outcome};
    if (*reason == RefusalReason::kNotStarted) {
      Log()->error("WORKER BUG: {} refused with not_started: complete/fail of an at_most_once attempt "
                   "whose started never arrived; not retried", what);
    } else {
      Log()->info("{} refused: {}", what, RefusalReasonName(*reason));
    }
    LeaseReply<T> reply;
    reply.refusal = std::move(refusal);
    return reply;
  }
  SCIMESH_ASSIGN_OR_RETURN(T value, Expect2xx(what, r, parse));
  LeaseReply<T> reply;
  reply.applied = std::move(value);
  return reply;
}

Result<RegisterResponse> Client::Register(const RegisterRequest& request) {
  auto r = Call("register", "POST", "/workers/register", SerializeRegisterRequest(request),
                options_.call_timeout, BudgetEnd(std::nullopt), false);
  return Expect2xx("register", r, ParseRegisterResponse);
}

Result<ClaimResult> Client::Claim(const ClaimRequest& request) {
  // The long poll may legitimately stay silent for wait_ms: no low-speed
  // abort, and a total timeout that leaves it the margin.
  const Millis timeout = Millis(std::max<int64_t>(0, request.wait_ms)) + options_.claim_margin;
  auto r = Call("claim", "POST", "/steps/claim", SerializeClaimRequest(request), timeout,
                BudgetEnd(std::nullopt), false);
  SCIMESH_ASSIGN_OR_RETURN(ClaimResponse response, Expect2xx("claim", r, ParseClaimResponse));
  return ClaimResult{std::move(response), r->sent_at};
}

Result<LeaseReply<LeaseExtension>> Client::Extend(std::string_view what, const LeaseCall& call, std::string body) {
  const std::string name = std::string(what) + " " + call.lease_id;
  auto r = Call(name, "POST", "/steps/" + EscapeComponent(call.lease_id) + "/" + std::string(what),
                std::move(body), options_.call_timeout, BudgetEnd(call.deadline), call.deadline.has_value());
  SCIMESH_ASSIGN_OR_RETURN(auto reply, LeaseAnswer(name, r, ParseExtendResponse));
  LeaseReply<LeaseExtension> out;
  out.refusal = std::move(reply.refusal);
  if (reply.applied) {
    const MonoTime sent = r->sent_at;
    out.applied = LeaseExtension{std::move(*reply.applied), sent,
                                 LeaseDeadline::FromTtl(sent, Millis(reply.applied->lease_ttl_ms))};
  }
  return out;
}

Result<LeaseReply<LeaseExtension>> Client::Started(const LeaseCall& call) {
  return Extend("started", call, SerializeBeatRequest({call.worker_id, call.attempt, std::nullopt}));
}

Result<LeaseReply<LeaseExtension>> Client::Heartbeat(const LeaseCall& call,
                                                     const std::optional<std::string>& progress_json) {
  return Extend("heartbeat", call, SerializeBeatRequest({call.worker_id, call.attempt, progress_json}));
}

Result<LeaseReply<CompleteResponse>> Client::Complete(const LeaseCall& call, CompleteRequest request) {
  request.worker_id = call.worker_id;
  request.attempt = call.attempt;
  const std::string what = "complete " + call.lease_id;
  auto r = Call(what, "POST", "/steps/" + EscapeComponent(call.lease_id) + "/complete",
                SerializeCompleteRequest(request), options_.call_timeout, BudgetEnd(call.deadline), false);
  return LeaseAnswer(what, r, ParseCompleteResponse);
}

Result<LeaseReply<FailResponse>> Client::Fail(const LeaseCall& call, FailClass error_class,
                                              std::string_view message) {
  FailRequest request{call.worker_id, call.attempt, error_class, SanitizeFailMessage(message)};
  const std::string what = "fail " + call.lease_id;
  auto r = Call(what, "POST", "/steps/" + EscapeComponent(call.lease_id) + "/fail",
                SerializeFailRequest(request), options_.call_timeout, BudgetEnd(call.deadline), false);
  return LeaseAnswer(what, r, ParseFailResponse);
}

Result<RunStatus> Client::StartRun(const RunCreateRequest& request) {
  auto r = Call("start run", "POST", "/runs", SerializeRunCreateRequest(request), options_.call_timeout,
                BudgetEnd(std::nullopt), false);
  return Expect2xx("start run", r, ParseRunStatus);
}

Result<RunView> Client::ShowRun(std::string_view run_id) {
  auto r = Call("show run", "GET", "/runs/" + EscapeComponent(run_id), "", options_.call_timeout,
                BudgetEnd(std::nullopt), false);
  return Expect2xx("show run", r, ParseRunView);
}

Result<Journal> Client::RunJournal(std::string_view run_id) {
  auto r = Call("run journal", "GET", "/runs/" + EscapeComponent(run_id) + "/journal", "",
                options_.call_timeout, BudgetEnd(std::nullopt), false);
  return Expect2xx("run journal", r, ParseJournal);
}

Result<RunStatus> Client::CancelRun(std::string_view run_id) {
  auto r = Call("cancel run", "POST", "/runs/" + EscapeComponent(run_id) + "/cancel", "{}",
                options_.call_timeout, BudgetEnd(std::nullopt), false);
  return Expect2xx("cancel run", r, ParseRunStatus);
}

}  // namespace scimesh

namespace scimesh {
// Used by client_artifacts.cc.
template Result<LeaseReply<ArtifactRef>> Client::LeaseAnswer<ArtifactRef>(std::string_view,
                                                                         const Result<HttpResponse>&,
                                                                         Result<ArtifactRef> (*)(std::string_view));
}  // namespace scimesh

// Client: typed calls, the retry loop and the mapping of HTTP answers to values.
#include "protocol/client/client.h"

#include <optional>

#include "protocol/client/coordinator_call.h"
#include "protocol/util/log.h"
#include "protocol/wire/fail_message.h"
#include "protocol/wire/wire_json.h"

namespace scimesh {
namespace {

std::shared_ptr<spdlog::logger> Log() { return log::For("client"); }

// No total timeout for artifact transfers: the low-speed abort guards them.
constexpr Millis kTransferTimeout = std::chrono::hours(24);

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
    case 507: return Status::ResourceExhausted(m);
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
  SCIMESH_ASSIGN_OR_RETURN(Url url, CheckCoordinatorUrl(options));
  SCIMESH_ASSIGN_OR_RETURN(auto session, HttpSession::Create(SessionOptions(options)));
  return std::unique_ptr<Client>(new Client(std::move(options), std::move(url), std::move(session)));
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

MonoTime Client::BudgetEnd(const std::optional<LeaseDeadline>& deadline) const {
  return deadline ? deadline->at() : RetryBudgetEnd(std::nullopt);
}

MonoTime Client::RetryBudgetEnd(std::optional<Millis> budget) const {
  return ClockOr(options_.clock).Now() + budget.value_or(options_.retry_budget);
}

Result<HttpResponse> Client::WithRetries(std::string_view what, MonoTime budget_end, bool bound_tries,
                                         const Try& once) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  bool last_try_made = false;
  std::optional<Status> last_failure;
  for (int n = 1;; ++n) {
    if (session_->interrupted()) return Status::Cancelled(std::string(what) + ": interrupted");
    Millis cap = kTransferTimeout;
    if (bound_tries) {
      const auto left = std::chrono::duration_cast<Millis>(budget_end - ClockOr(options_.clock).Now());
      if (left <= Millis(0)) return Status::Timeout(std::string(what) + ": the lease deadline passed");
      cap = left;
    }
    TryVerdict v = JudgeTry(what, once(cap), BackoffDelay(options_.backoff, n, unit(rng_)));
    if (v.result) return std::move(*v.result);
    // A retry budget is spent in full: a wait that would pass its end is cut
    // short for one last try at the end. A lease deadline is not: past it
    // the lease is lost anyway.
    const auto left = std::chrono::duration_cast<Millis>(budget_end - ClockOr(options_.clock).Now());
    if (left <= Millis(0) || (v.wait >= left && (last_try_made || bound_tries))) return GaveUp(v.failure, n);
    if (v.wait >= left) {
      v.wait = left;
      last_try_made = true;
    }
    // One warning per distinct failure; the same failure again is debug.
    const bool repeated = last_failure && SameFailure(v.failure, *last_failure);
    Log()->log(repeated ? spdlog::level::debug : spdlog::level::warn, "{}; retry {} in {} ms",
               v.failure.message(), n, v.wait.count());
    last_failure = v.failure;
    if (!SleepUnlessInterrupted(v.wait)) return Status::Cancelled(std::string(what) + ": interrupted");
  }
}

Result<HttpResponse> Client::Call(std::string_view what, const std::string& method, const std::string& path,
                                  std::string body, Millis timeout, MonoTime budget_end, bool bound_tries) {
  HttpRequest req = CoordinatorRequest(options_, method, path, std::move(body));
  return WithRetries(what, budget_end, bound_tries, [&](Millis cap) {
    req.timeout = std::min(timeout, cap);
    return session_->Perform(req);
  });
}

Result<RegisterResponse> Client::Register(const RegisterRequest& request, std::optional<Millis> budget) {
  auto r = Call("register", "POST", "/workers/register", SerializeRegisterRequest(request),
                options_.call_timeout, RetryBudgetEnd(budget), false);
  return Expect2xx("register", r, ParseRegisterResponse);
}

Result<ClaimResult> Client::Claim(const ClaimRequest& request, std::optional<Millis> budget) {
  // The long poll may legitimately stay silent for wait_ms: no low-speed
  // abort, and a total timeout that leaves it the margin.
  const Millis timeout = Millis(std::max<int64_t>(0, request.wait_ms)) + options_.claim_margin;
  auto r = Call("claim", "POST", "/steps/claim", SerializeClaimRequest(request), timeout, RetryBudgetEnd(budget),
                false);
  SCIMESH_ASSIGN_OR_RETURN(ClaimResponse response, Expect2xx("claim", r, ParseClaimResponse));
  return ClaimResult{std::move(response), r->sent_at};
}

Result<LeaseReply<LeaseExtension>> Client::Started(const LeaseCall& call) {
  return Extend("started", call, std::nullopt);
}

Result<LeaseReply<LeaseExtension>> Client::Heartbeat(const LeaseCall& call,
                                                     const std::optional<std::string>& progress_json) {
  return Extend("heartbeat", call, progress_json);
}

Result<LeaseReply<LeaseExtension>> Client::Extend(std::string_view what, const LeaseCall& call,
                                                  const std::optional<std::string>& progress_json) {
  const std::string name = LeaseCallName(what, call);
  HttpRequest req = ExtendRequest(options_, what, call, progress_json);
  auto r = WithRetries(name, BudgetEnd(call.deadline), call.deadline.has_value(), [&](Millis cap) {
    req.timeout = std::min(options_.call_timeout, cap);
    return session_->Perform(req);
  });
  return ExtensionAnswer(name, r);
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

Result<QueuedDemand> Client::Demand(const DemandQuery& query) {
  if (query.workflows.size() > kMaxDemandWorkflows) {
    return Status::InvalidArgument("demand: at most " + std::to_string(kMaxDemandWorkflows) + " workflows");
  }
  std::string path = "/demand";
  for (size_t i = 0; i < query.workflows.size(); ++i) {
    path += (i == 0 ? "?workflow=" : "&workflow=") + EscapeComponent(query.workflows[i]);
  }
  auto r = Call("demand", "GET", path, "", options_.call_timeout, BudgetEnd(std::nullopt), false);
  return Expect2xx("demand", r, ParseQueuedDemand);
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

Result<RunList> Client::ListRuns(const RunListQuery& query) {
  std::string path = "/runs?limit=" + std::to_string(query.limit);
  if (query.workflow) path += "&workflow=" + EscapeComponent(*query.workflow);
  if (query.state) path += "&state=" + EscapeComponent(*query.state);
  auto r = Call("list runs", "GET", path, "", options_.call_timeout, BudgetEnd(std::nullopt), false);
  return Expect2xx("list runs", r, ParseRunList);
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

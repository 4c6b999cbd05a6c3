// Coordinator calls: the request, the retry verdict of one try, the typed reply.
#include "protocol/client/coordinator_call.h"

#include <regex>

#include "protocol/util/log.h"
#include "protocol/wire/wire_json.h"

namespace scimesh {
namespace {

std::shared_ptr<spdlog::logger> Log() { return log::For("client"); }

Millis Since(MonoTime t) {
  return std::chrono::duration_cast<Millis>(std::chrono::steady_clock::now() - t);
}

}  // namespace

Result<Url> CheckCoordinatorUrl(ClientOptions& options) {
  while (!options.coordinator_url.empty() && options.coordinator_url.back() == '/') {
    options.coordinator_url.pop_back();
  }
  auto url = ParseUrl(options.coordinator_url);
  if (!url.ok()) return url.status().WithContext("coordinator URL");
  SCIMESH_RETURN_IF_ERROR(CheckTransportPolicy(*url, options.allow_insecure_http));
  return url;
}

HttpSessionOptions SessionOptions(const ClientOptions& options) {
  HttpSessionOptions so;
  so.connect_timeout = options.connect_timeout;
  so.insecure_tls = options.insecure_tls;
  so.ca_file = options.ca_file;
  so.user_agent = options.user_agent;
  so.clock = options.clock;
  return so;
}

HttpRequest CoordinatorRequest(const ClientOptions& options, std::string method, const std::string& path,
                               std::string body) {
  HttpRequest req;
  req.method = std::move(method);
  req.url = options.coordinator_url + "/v1/api" + path;
  req.headers = {"Content-Type: application/json", "Accept: application/json"};
  req.peer = "the coordinator";
  if (!options.token.empty()) req.bearer = &options.token.secret();
  req.body = std::move(body);
  req.max_body_bytes = options.max_response_bytes;
  return req;
}

std::string LeaseCallName(std::string_view call, const LeaseCall& lease) {
  return std::string(call) + " " + lease.lease_id;
}

HttpRequest ExtendRequest(const ClientOptions& options, std::string_view call, const LeaseCall& lease,
                          const std::optional<std::string>& progress_json) {
  return CoordinatorRequest(options, "POST", "/steps/" + EscapeComponent(lease.lease_id) + "/" + std::string(call),
                            ExtendBody(lease, progress_json));
}

std::string ExtendBody(const LeaseCall& lease, const std::optional<std::string>& progress_json) {
  return SerializeBeatRequest({lease.worker_id, lease.attempt, progress_json});
}

TryVerdict JudgeTry(std::string_view what, Result<HttpResponse> r, Millis backoff_delay) {
  TryVerdict v;
  v.wait = backoff_delay;
  if (!r.ok()) {
    v.failure = r.status().WithContext(what);  // every error names `what` once, at the front
    const Code code = r.status().code();
    if (code != Code::kUnavailable && code != Code::kTimeout) v.result = Result<HttpResponse>(v.failure);
    return v;
  }
  if (r->status >= 500 || r->status == 429) {
    v.failure = StatusFromErrorResponse(what, *r);
    if (auto after = ParseRetryAfter(r->Header("retry-after"), std::chrono::system_clock::now())) {
      v.wait = std::max(v.wait, *after);  // the server knows better when to come back
    }
    return v;
  }
  Log()->debug("{} answered {} in {} ms", what, r->status, Since(r->sent_at).count());
  v.result = std::move(r);
  return v;
}

bool SameFailure(const Status& a, const Status& b) {
  // libcurl's elapsed time, "after 9 ms", is not part of what failed.
  static const std::regex kElapsed("after [0-9]+ ms");
  return a.code() == b.code() &&
         std::regex_replace(std::string(a.message()), kElapsed, "after ms") ==
             std::regex_replace(std::string(b.message()), kElapsed, "after ms");
}

Status GaveUp(const Status& failure, int tries) {
  return Status(failure.code(), failure.message() + " (gave up after " + std::to_string(tries) +
                                    (tries == 1 ? " try)" : " tries)"));
}

template <typename T>
Result<LeaseReply<T>> LeaseAnswer(std::string_view what, const Result<HttpResponse>& r,
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

template Result<LeaseReply<ExtendResponse>> LeaseAnswer(std::string_view, const Result<HttpResponse>&,
                                                        Result<ExtendResponse> (*)(std::string_view));
template Result<LeaseReply<CompleteResponse>> LeaseAnswer(std::string_view, const Result<HttpResponse>&,
                                                          Result<CompleteResponse> (*)(std::string_view));
template Result<LeaseReply<FailResponse>> LeaseAnswer(std::string_view, const Result<HttpResponse>&,
                                                      Result<FailResponse> (*)(std::string_view));
template Result<LeaseReply<ArtifactRef>> LeaseAnswer(std::string_view, const Result<HttpResponse>&,
                                                     Result<ArtifactRef> (*)(std::string_view));

Result<LeaseReply<LeaseExtension>> ExtensionAnswer(std::string_view what, const Result<HttpResponse>& r) {
  SCIMESH_ASSIGN_OR_RETURN(auto reply, LeaseAnswer(what, r, ParseExtendResponse));
  LeaseReply<LeaseExtension> out;
  out.refusal = std::move(reply.refusal);
  if (reply.applied) {
    const MonoTime sent = r->sent_at;
    out.applied = LeaseExtension{std::move(*reply.applied), sent,
                                 LeaseDeadline::FromTtl(sent, Millis(reply.applied->lease_ttl_ms))};
  }
  return out;
}

}  // namespace scimesh

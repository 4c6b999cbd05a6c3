// HttpApi: the worker calls — register, claim (the long poll), the demand,
// and the lease calls started / heartbeat / complete / fail.
#include <algorithm>
#include <chrono>

#include "coordinator/http_api.h"
#include "coordinator/requests.h"
#include "protocol/wire/identifiers.h"
#include "protocol/wire/wire_json.h"

namespace scimesh::coordinator {

void HttpApi::Register(const HttpRequest& req, HttpResponse& res, const ContentReader& reader) {
  auto call = Accept(req, res, reader, kScopeWorker, &ReadRegisterRequest);
  if (!call) return;
  auto reply = ledger_.Register(call->request, call->key);
  if (!reply.ok()) {
    if (reply.error().error == "not_owner") audit_.Record(call->key.name, req.method, req.path, 403);
    return ReplyError(res, reply.error());
  }
  ReplyJson(res, 200, SerializeRegisterResponse(reply.value()));
}

void HttpApi::Claim(const HttpRequest& req, HttpResponse& res, const ContentReader& reader) {
  auto call = Accept(req, res, reader, kScopeWorker, &ReadClaimRequest);
  if (!call) return;
  const ClaimRequest& claim = call->request;

  // Held at most wait_ms and never longer than 4/5 of the request timeout;
  // while held it costs no thread (HttpServer holds it and asks again
  // whenever work may have become available).
  using Clock = std::chrono::steady_clock;
  const auto until =
      Clock::now() + std::chrono::milliseconds(std::min<int64_t>(claim.wait_ms, limits_.max_claim_hold_ms));
  res.Hold(until, [this, claim, key = call->key, method = req.method, path = req.path, until](HttpResponse& r,
                                                                                        bool shutting_down) {
    if (shutting_down) {
      ReplyJson(r, 200, SerializeClaimResponse(ClaimResponse{}));  // release the poll
      return true;
    }
    auto reply = ledger_.Claim(claim, key);
    if (!reply.ok()) {
      if (reply.error().error == "not_owner") audit_.Record(key.name, method, path, 403);
      ReplyError(r, reply.error());
      return true;
    }
    if (reply.value().leases.empty() && Clock::now() < until) return false;
    ClaimResponse claimed = std::move(reply).value();
    for (Lease& l : claimed.leases) l.lease_token = tokens_.Issue(l.lease_id, l.attempt);
    ReplyJson(r, 200, SerializeClaimResponse(claimed));
    return true;
  });
}

void HttpApi::Demand(const HttpRequest& req, HttpResponse& res) {
  auto key = Authorize(req, res, kScopeWorker);
  if (!key) return;
  auto query = ParseDemandQuery(req.params);
  if (!query.ok()) return ReplyError(res, query.error());
  auto reply = ledger_.Demand(query.value(), *key);
  if (!reply.ok()) {
    if (reply.error().error == "not_owner") audit_.Record(key->name, req.method, req.path, 403);
    return ReplyError(res, reply.error());
  }
  ReplyJson(res, 200, SerializeQueuedDemand(reply.value()));
}

void HttpApi::ReportOnLease(LeaseCall call, const HttpRequest& req, HttpResponse& res,
                        const ContentReader& reader) {
  Body raw = ReadBody(req, reader, limits_.max_body);
  const std::string lease_id = req.matches[1];
  auto who = AuthorizeLeaseCall(req, res, lease_id, raw.unread());
  if (!who) return;
  auto body = BodyText(res, raw);
  if (!body) return;
  if (!CheckLeaseId(lease_id, "lease_id").ok()) return ReplyError(res, ApiError::NotFound("no lease " + lease_id));

  // Each call: the body as `read` parses it names the caller's worker_id and
  // attempt; `apply` asks the Ledger and `write` is the answer's JSON.
  LeaseCaller caller = *who;
  auto report = [&](auto read, auto apply, auto write) {
    auto parsed = read(*body);
    if (!parsed.ok()) return ReplyError(res, parsed.error());
    caller.worker_id = parsed.value().worker_id;
    caller.attempt = parsed.value().attempt;
    auto r = apply(parsed.value());
    r.ok() ? ReplyJson(res, 200, write(r.value())) : ReplyError(res, r.error());
  };
  switch (call) {
    case LeaseCall::kStarted:
      return report(
          &ReadStartedRequest, [&](const BeatRequest&) { return ledger_.Started(lease_id, caller); },
          &SerializeExtendResponse);
    case LeaseCall::kHeartbeat:
      return report(
          &ReadHeartbeatRequest,
          [&](const BeatRequest& beat) { return ledger_.Heartbeat(lease_id, caller, beat.progress_json); },
          &SerializeExtendResponse);
    case LeaseCall::kComplete:
      return report(
          &ReadCompleteRequest, [&](const CompleteRequest& r) { return ledger_.Complete(lease_id, caller, r); },
          [](const Done&) { return SerializeCompleteResponse(CompleteResponse{"completed"}); });
    case LeaseCall::kFail:
      return report(
          &ReadFailRequest, [&](const FailRequest& r) { return ledger_.Fail(lease_id, caller, r); },
          &SerializeFailResponse);
    case LeaseCall::kArtifact:
      break;
  }
  ReplyError(res, ApiError::NotFound("no such lease call"));
}

}  // namespace scimesh::coordinator

// HttpApi: the worker calls — register, claim (the long poll), and the lease
// calls started / heartbeat / complete / fail.
#include <algorithm>
#include <chrono>

#include "coordinator/http_api.h"
#include "coordinator/requests.h"
#include "protocol/identifiers.h"
#include "protocol/wire_json.h"

namespace scimesh::coordinator {

void HttpApi::Register(const HttpRequest& req, HttpResponse& res, const ContentReader& reader) {
  Body raw = ReadBody(req, reader, limits_.max_body);
  auto key = Authorize(req, res, kScopeWorker, raw.unread());
  if (!key) return;
  auto body = BodyText(res, raw);
  if (!body) return;
  auto parsed = ReadRegisterRequest(*body);
  if (!parsed.ok()) return ReplyError(res, parsed.error());
  auto reply = ledger_.Register(parsed.value(), *key);
  if (!reply.ok()) {
    if (reply.error().error == "not_owner") audit_.Record(key->name, req.method, req.path, 403);
    return ReplyError(res, reply.error());
  }
  ReplyJson(res, 200, SerializeRegisterResponse(reply.value()));
}

void HttpApi::Claim(const HttpRequest& req, HttpResponse& res, const ContentReader& reader) {
  Body raw = ReadBody(req, reader, limits_.max_body);
  auto key = Authorize(req, res, kScopeWorker, raw.unread());
  if (!key) return;
  auto body = BodyText(res, raw);
  if (!body) return;
  auto parsed = ReadClaimRequest(*body);
  if (!parsed.ok()) return ReplyError(res, parsed.error());
  const ClaimRequest& claim = parsed.value();

  // Held at most wait_ms and never longer than 4/5 of the request timeout;
  // while held it costs no thread (HttpServer holds it and asks again
  // whenever work may have become available).
  using Clock = std::chrono::steady_clock;
  const auto until =
      Clock::now() + std::chrono::milliseconds(std::min<int64_t>(claim.wait_ms, limits_.max_claim_hold_ms));
  res.Hold(until, [this, claim, key = *key, method = req.method, path = req.path, until](HttpResponse& r,
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

void HttpApi::ReportOnLease(LeaseCall call, const HttpRequest& req, HttpResponse& res,
                        const ContentReader& reader) {
  Body raw = ReadBody(req, reader, limits_.max_body);
  const std::string lease_id = req.matches[1];
  auto who = AuthorizeLeaseCall(req, res, lease_id, raw.unread());
  if (!who) return;
  auto body = BodyText(res, raw);
  if (!body) return;
  if (!CheckLeaseId(lease_id, "lease_id").ok()) return ReplyError(res, ApiError::NotFound("no lease " + lease_id));

  LeaseCaller caller = *who;
  switch (call) {
    case LeaseCall::kStarted: {
      auto p = ReadStartedRequest(*body);
      if (!p.ok()) return ReplyError(res, p.error());
      caller.worker_id = p.value().worker_id;
      caller.attempt = p.value().attempt;
      auto r = ledger_.Started(lease_id, caller);
      return r.ok() ? ReplyJson(res, 200, SerializeExtendResponse(r.value())) : ReplyError(res, r.error());
    }
    case LeaseCall::kHeartbeat: {
      auto p = ReadHeartbeatRequest(*body);
      if (!p.ok()) return ReplyError(res, p.error());
      caller.worker_id = p.value().worker_id;
      caller.attempt = p.value().attempt;
      auto r = ledger_.Heartbeat(lease_id, caller, p.value().progress_json);
      return r.ok() ? ReplyJson(res, 200, SerializeExtendResponse(r.value())) : ReplyError(res, r.error());
    }
    case LeaseCall::kComplete: {
      auto p = ReadCompleteRequest(*body);
      if (!p.ok()) return ReplyError(res, p.error());
      caller.worker_id = p.value().worker_id;
      caller.attempt = p.value().attempt;
      auto r = ledger_.Complete(lease_id, caller, p.value());
      if (!r.ok()) return ReplyError(res, r.error());
      return ReplyJson(res, 200, SerializeCompleteResponse(CompleteResponse{"completed"}));
    }
    case LeaseCall::kFail: {
      auto p = ReadFailRequest(*body);
      if (!p.ok()) return ReplyError(res, p.error());
      caller.worker_id = p.value().worker_id;
      caller.attempt = p.value().attempt;
      auto r = ledger_.Fail(lease_id, caller, p.value());
      return r.ok() ? ReplyJson(res, 200, SerializeFailResponse(r.value())) : ReplyError(res, r.error());
    }
    case LeaseCall::kArtifact:
      break;
  }
  ReplyError(res, ApiError::NotFound("no such lease call"));
}

}  // namespace scimesh::coordinator

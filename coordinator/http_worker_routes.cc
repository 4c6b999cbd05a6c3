// HttpApi: the worker calls — register, claim (the long poll), and the lease
// calls started / heartbeat / complete / fail.
#include <httplib.h>

#include <algorithm>
#include <chrono>

#include "coordinator/http_api.h"
#include "coordinator/identifiers.h"
#include "coordinator/requests.h"
#include "coordinator/responses.h"

namespace scimesh::coordinator {

void HttpApi::Register(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader) {
  Body raw = ReadBody(req, reader, limits_.max_body);
  auto key = Authorize(req, res, kScopeWorker, raw.unread());
  if (!key) return;
  auto body = ParseBody(res, raw);
  if (!body) return;
  auto parsed = ParseRegisterRequest(*body);
  if (!parsed.ok()) return ReplyError(res, parsed.error());
  auto reply = ledger_.Register(parsed.value(), *key);
  if (!reply.ok()) {
    if (reply.error().error == "not_owner") audit_.Record(key->name, req.method, req.path, 403);
    return ReplyError(res, reply.error());
  }
  ReplyJson(res, 200, ToJson(reply.value()));
}

void HttpApi::Claim(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader) {
  Body raw = ReadBody(req, reader, limits_.max_body);
  auto key = Authorize(req, res, kScopeWorker, raw.unread());
  if (!key) return;
  auto body = ParseBody(res, raw);
  if (!body) return;
  auto parsed = ParseClaimRequest(*body);
  if (!parsed.ok()) return ReplyError(res, parsed.error());
  const ClaimRequest& claim = parsed.value();

  // Held at most wait_ms and never longer than 4/5 of the request timeout.
  using Clock = ClaimWaker::Clock;
  const auto until =
      Clock::now() + std::chrono::milliseconds(std::min<int64_t>(claim.wait_ms, limits_.max_claim_hold_ms));
  constexpr auto kRecheck = std::chrono::milliseconds(500);  // at most twice a second without a wakeup
  for (;;) {
    // Note the generation before looking: a change announced while we look
    // ends the wait below at once.
    const uint64_t seen = waker_.generation();
    auto reply = ledger_.Claim(claim, *key);
    if (!reply.ok()) {
      if (reply.error().error == "not_owner") audit_.Record(key->name, req.method, req.path, 403);
      return ReplyError(res, reply.error());
    }
    const auto now = Clock::now();
    if (!reply.value().leases.empty() || now >= until) return ReplyJson(res, 200, ToJson(reply.value()));
    if (!waker_.WaitFor(seen, std::min(until, now + kRecheck))) {
      return ReplyJson(res, 200, ToJson(ClaimReply{}));  // shutting down: release the poll
    }
  }
}

void HttpApi::ReportOnLease(LeaseCall call, const httplib::Request& req, httplib::Response& res,
                        const httplib::ContentReader& reader) {
  Body raw = ReadBody(req, reader, limits_.max_body);
  auto key = Authorize(req, res, kScopeWorker, raw.unread());
  if (!key) return;
  const std::string lease_id = req.matches[1];
  auto body = ParseBody(res, raw);
  if (!body) return;
  if (!IsLeaseId(lease_id)) return ReplyError(res, ApiError::NotFound("no lease " + lease_id));

  LeaseCaller caller;
  caller.key_name = key->name;
  caller.admin = key->admin();
  switch (call) {
    case LeaseCall::kStarted: {
      auto p = ParseStartedRequest(*body);
      if (!p.ok()) return ReplyError(res, p.error());
      caller.worker_id = p.value().worker_id;
      caller.attempt = p.value().attempt;
      auto r = ledger_.Started(lease_id, caller);
      return r.ok() ? ReplyJson(res, 200, ToJson(r.value())) : ReplyError(res, r.error());
    }
    case LeaseCall::kHeartbeat: {
      auto p = ParseHeartbeatRequest(*body);
      if (!p.ok()) return ReplyError(res, p.error());
      caller.worker_id = p.value().who.worker_id;
      caller.attempt = p.value().who.attempt;
      auto r = ledger_.Heartbeat(lease_id, caller, p.value().progress_json);
      return r.ok() ? ReplyJson(res, 200, ToJson(r.value())) : ReplyError(res, r.error());
    }
    case LeaseCall::kComplete: {
      auto p = ParseCompleteRequest(*body);
      if (!p.ok()) return ReplyError(res, p.error());
      caller.worker_id = p.value().who.worker_id;
      caller.attempt = p.value().who.attempt;
      auto r = ledger_.Complete(lease_id, caller, p.value());
      return r.ok() ? ReplyJson(res, 200, CompleteJson()) : ReplyError(res, r.error());
    }
    case LeaseCall::kFail: {
      auto p = ParseFailRequest(*body);
      if (!p.ok()) return ReplyError(res, p.error());
      caller.worker_id = p.value().who.worker_id;
      caller.attempt = p.value().who.attempt;
      auto r = ledger_.Fail(lease_id, caller, p.value());
      return r.ok() ? ReplyJson(res, 200, ToJson(r.value())) : ReplyError(res, r.error());
    }
    case LeaseCall::kArtifact:
      break;
  }
  ReplyError(res, ApiError::NotFound("no such lease call"));
}

}  // namespace scimesh::coordinator

// HttpApi: route table, authentication, body reading, error bodies, health.
#include "coordinator/http_api.h"

#include <strings.h>

#include <cstring>

#include "coordinator/responses.h"
#include "protocol/util/log.h"

namespace scimesh::coordinator {
void ReplyJson(HttpResponse& res, int status, const std::string& json) {
  res.status = status;
  res.set_content(json, "application/json");
}

void ReplyError(HttpResponse& res, const ApiError& error) {
  if (error.retry_after_s > 0) res.set_header("Retry-After", std::to_string(error.retry_after_s));
  ReplyJson(res, error.http_status, ToJson(error));
}

void RefuseUnread(HttpResponse& res, const ApiError& error) {
  res.set_header("Connection", "close");
  ReplyError(res, error);
}

std::optional<std::string> HttpApi::BearerToken(const HttpRequest& req) {
  const std::string header = req.get_header_value("Authorization");
  constexpr std::string_view kBearer = "Bearer ";
  if (header.size() <= kBearer.size() || header.size() > 1024 ||
      strncasecmp(header.c_str(), kBearer.data(), kBearer.size()) != 0) {
    return std::nullopt;
  }
  return header.substr(kBearer.size());
}

ApiResult<LeaseCaller> HttpApi::IdentifyLeaseCaller(const HttpRequest& req, std::string_view lease_id) {
  const std::optional<std::string> token = BearerToken(req);
  if (token && LeaseTokens::LooksLikeOne(*token)) {
    const auto grant = tokens_.Verify(*token);
    if (!grant || grant->lease_id != lease_id) {
      audit_.RecordAuthFailure(req.remote_addr, req.method, req.path);
      return ApiError::Unauthorized("a lease token is valid only for its own lease's calls");
    }
    LeaseCaller caller;
    caller.lease_token_attempt = grant->attempt;
    return caller;
  }
  auto key = IdentifyCaller(req, kScopeWorker);
  if (!key.ok()) return key.error();
  LeaseCaller caller;
  caller.key_name = key.value().name;
  caller.admin = key.value().admin();
  return caller;
}

std::optional<LeaseCaller> HttpApi::AuthorizeLeaseCall(const HttpRequest& req, HttpResponse& res,
                                                       std::string_view lease_id, bool body_unread) {
  auto caller = IdentifyLeaseCaller(req, lease_id);
  if (caller.ok()) return caller.value();
  body_unread ? RefuseUnread(res, caller.error()) : ReplyError(res, caller.error());
  return std::nullopt;
}

ApiResult<KeyIdentity> HttpApi::IdentifyCaller(const HttpRequest& req, unsigned scopes) {
  const std::optional<std::string> token = BearerToken(req);
  if (!token) {
    audit_.RecordAuthFailure(req.remote_addr, req.method, req.path);
    return ApiError::Unauthorized("an Authorization: Bearer <key> header is required");
  }
  auto key = keys_.Identify(*token);
  if (!key) {
    audit_.RecordAuthFailure(req.remote_addr, req.method, req.path);
    return ApiError::Unauthorized("unknown key");
  }
  if (!key->Allows(scopes)) {
    return ApiError::Forbidden("key '" + key->name + "' lacks the scope " + ScopesText(scopes));
  }
  return *key;
}

std::optional<KeyIdentity> HttpApi::Authorize(const HttpRequest& req, HttpResponse& res,
                                              unsigned scopes, bool body_unread) {
  auto key = IdentifyCaller(req, scopes);
  if (key.ok()) return key.value();
  body_unread ? RefuseUnread(res, key.error()) : ReplyError(res, key.error());
  return std::nullopt;
}

bool HttpApi::HasBodyFraming(const HttpRequest& req) {
  if (req.has_header("Content-Length")) return true;
  const std::string te = req.get_header_value("Transfer-Encoding");
  return strcasestr(te.c_str(), "chunked") != nullptr;
}

HttpApi::Body HttpApi::ReadBody(const HttpRequest& req, const ContentReader& reader, size_t limit) {
  Body body;
  switch (req.body_state) {
    case HttpRequest::BodyState::kNoLength:
      body.state = Body::kNoLength;  // reading would wait for the client to close
      return body;
    case HttpRequest::BodyState::kCutOff:
      body.state = Body::kUnread;
      return body;
    case HttpRequest::BodyState::kTooLarge:
      body.state = Body::kTooLarge;  // the front end read it to its end
      return body;
    case HttpRequest::BodyState::kComplete:
      if (req.body.size() > limit) {
        body.state = Body::kTooLarge;
      } else {
        body.text = req.body;
      }
      return body;
    case HttpRequest::BodyState::kStreamed:
      break;
  }
  if (!HasBodyFraming(req)) {
    body.state = Body::kNoLength;
    return body;
  }
  if (req.has_header("Content-Length")) {
    const std::string declared = req.get_header_value("Content-Length");
    if (declared.size() > 18 || std::strtoull(declared.c_str(), nullptr, 10) > kDrainCap) {
      body.state = Body::kUnread;  // too large to drain: refuse and close
      return body;
    }
  }
  size_t seen = 0;
  bool complete = reader([&](const char* data, size_t n) {
    seen += n;
    if (seen > kDrainCap) return false;
    if (seen <= limit) body.text.append(data, n);
    return true;
  });
  if (seen > kDrainCap || !complete) {
    body.state = Body::kUnread;
  } else if (seen > limit) {
    body.state = Body::kTooLarge;
  }
  if (body.state != Body::kRead) body.text.clear();
  return body;
}

const std::string* HttpApi::BodyText(HttpResponse& res, const Body& body) {
  if (body.state == Body::kNoLength) {
    RefuseUnread(res, ApiError::LengthRequired());
    return nullptr;
  }
  if (body.state != Body::kRead) {
    ApiError e = ApiError::TooLarge("the body is larger than " + std::to_string(limits_.max_body) + " bytes");
    body.state == Body::kUnread ? RefuseUnread(res, e) : ReplyError(res, e);
    return nullptr;
  }
  return &body.text;
}

void HttpApi::Install(HttpServer& server) {
  using Lane = HttpServer::Lane;
  // A connection whose request carries a known key leaves the budget of
  // connections without one (scopes are checked by each route).
  server.AuthenticateConnectionsWith([this](const HttpRequest& req) {
    const std::optional<std::string> token = BearerToken(req);
    if (!token) return false;
    return LeaseTokens::LooksLikeOne(*token) ? tokens_.Verify(*token).has_value() : keys_.Identify(*token).has_value();
  });
  server.Route("GET", "/v1/api/health", Lane::kInline,
               [](const HttpRequest&, HttpResponse& res, const ContentReader&) { ReplyJson(res, 200, R"({"status":"ok"})"); });
  server.Route("POST", "/v1/api/workers/register", Lane::kFirst,
               [this](const HttpRequest& q, HttpResponse& r, const ContentReader& c) { Register(q, r, c); });
  server.Route("POST", "/v1/api/steps/claim", Lane::kClaims,
               [this](const HttpRequest& q, HttpResponse& r, const ContentReader& c) { Claim(q, r, c); });
  server.Route("GET", "/v1/api/demand", Lane::kFirst,
               [this](const HttpRequest& q, HttpResponse& r, const ContentReader&) { Demand(q, r); });
  for (auto [suffix, call] : {std::pair{"started", LeaseCall::kStarted}, std::pair{"heartbeat", LeaseCall::kHeartbeat},
                              std::pair{"complete", LeaseCall::kComplete}, std::pair{"fail", LeaseCall::kFail}}) {
    server.Route("POST", std::string(R"(/v1/api/steps/([^/]+)/)") + suffix, Lane::kFirst,
                 [this, call = call](const HttpRequest& q, HttpResponse& r, const ContentReader& c) {
                   ReportOnLease(call, q, r, c);
                 });
  }
  server.Route("PUT", R"(/v1/api/steps/([^/]+)/artifacts/([^/]+))", Lane::kStreamed,
               [this](const HttpRequest& q, HttpResponse& r, const ContentReader& c) { UploadArtifact(q, r, c); });
  server.Route("GET", R"(/v1/api/artifacts/([^/]+))", Lane::kFirst,
               [this](const HttpRequest& q, HttpResponse& r, const ContentReader&) { DownloadArtifact(q, r); });
  server.Route("POST", "/v1/api/runs", Lane::kFirst,
               [this](const HttpRequest& q, HttpResponse& r, const ContentReader& c) { CreateRun(q, r, c); });
  server.Route("GET", "/v1/api/runs", Lane::kFirst,
               [this](const HttpRequest& q, HttpResponse& r, const ContentReader&) { ListRuns(q, r); });
  server.Route("GET", R"(/v1/api/runs/([^/]+))", Lane::kFirst,
               [this](const HttpRequest& q, HttpResponse& r, const ContentReader&) { ShowRun(q, r, false); });
  server.Route("GET", R"(/v1/api/runs/([^/]+)/journal)", Lane::kFirst,
               [this](const HttpRequest& q, HttpResponse& r, const ContentReader&) { ShowRun(q, r, true); });
  server.Route("POST", R"(/v1/api/runs/([^/]+)/cancel)", Lane::kFirst,
               [this](const HttpRequest& q, HttpResponse& r, const ContentReader& c) { CancelRun(q, r, c); });
}

}  // namespace scimesh::coordinator

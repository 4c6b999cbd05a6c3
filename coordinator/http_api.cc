// HttpApi: route table, authentication, body reading, error bodies, health.
#include "coordinator/http_api.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <cstring>

#include "coordinator/responses.h"
#include "protocol/log.h"

namespace scimesh::coordinator {
namespace {

const char* DefaultErrorName(int status) {
  switch (status) {
    case 400: return "bad_request";
    case 401: return "unauthorized";
    case 403: return "forbidden";
    case 404: return "not_found";
    case 409: return "conflict";
    case 411: return "length_required";
    case 413: return "too_large";
    case 429: return "too_many_requests";
    case 503: return "unavailable";
    default: return status >= 500 ? "internal" : "bad_request";
  }
}

}  // namespace

void ReplyJson(httplib::Response& res, int status, const std::string& json) {
  res.status = status;
  res.set_content(json, "application/json");
}

void ReplyError(httplib::Response& res, const ApiError& error) {
  if (error.retry_after_s > 0) res.set_header("Retry-After", std::to_string(error.retry_after_s));
  ReplyJson(res, error.http_status, ToJson(error));
}

void RefuseUnread(httplib::Response& res, const ApiError& error) {
  res.set_header("Connection", "close");
  ReplyError(res, error);
}

ApiResult<KeyIdentity> HttpApi::IdentifyCaller(const httplib::Request& req, unsigned scopes) {
  const std::string header = req.get_header_value("Authorization");
  constexpr std::string_view kBearer = "Bearer ";
  if (header.size() <= kBearer.size() || header.size() > 1024 ||
      strncasecmp(header.c_str(), kBearer.data(), kBearer.size()) != 0) {
    return ApiError::Unauthorized("an Authorization: Bearer <key> header is required");
  }
  auto key = keys_.Identify(std::string_view(header).substr(kBearer.size()));
  if (!key) return ApiError::Unauthorized("unknown key");
  if (!key->Allows(scopes)) {
    return ApiError::Forbidden("key '" + key->name + "' lacks the scope " + ScopesText(scopes));
  }
  return *key;
}

std::optional<KeyIdentity> HttpApi::Authorize(const httplib::Request& req, httplib::Response& res,
                                              unsigned scopes, bool body_unread) {
  auto key = IdentifyCaller(req, scopes);
  if (key.ok()) return key.value();
  body_unread ? RefuseUnread(res, key.error()) : ReplyError(res, key.error());
  return std::nullopt;
}

bool HttpApi::HasBodyFraming(const httplib::Request& req) {
  if (req.has_header("Content-Length")) return true;
  const std::string te = req.get_header_value("Transfer-Encoding");
  return strcasestr(te.c_str(), "chunked") != nullptr;
}

HttpApi::Body HttpApi::ReadBody(const httplib::Request& req, const httplib::ContentReader& reader, size_t limit) {
  Body body;
  if (!HasBodyFraming(req)) {
    body.state = Body::kNoLength;  // reading would wait for the client to close
    return body;
  }
  if (req.has_header("Content-Length")) {
    const std::string declared = req.get_header_value("Content-Length");
    if (declared.size() > 18 || std::stoull("0" + declared) > kDrainCap) {
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

std::unique_ptr<rapidjson::Document> HttpApi::ParseBody(httplib::Response& res, const Body& body) {
  if (body.state == Body::kNoLength) {
    RefuseUnread(res, ApiError::LengthRequired());
    return nullptr;
  }
  if (body.state != Body::kRead) {
    ApiError e = ApiError::TooLarge("the body is larger than " + std::to_string(limits_.max_body) + " bytes");
    body.state == Body::kUnread ? RefuseUnread(res, e) : ReplyError(res, e);
    return nullptr;
  }
  auto doc = ParseJson(body.text, limits_.json);
  if (!doc.ok()) {
    ReplyError(res, doc.error());
    return nullptr;
  }
  return std::move(doc).value();
}

void HttpApi::Install(httplib::Server& server) {
  using httplib::ContentReader;
  using httplib::Request;
  using httplib::Response;

  server.Get("/v1/api/health", [](const Request&, Response& res) { ReplyJson(res, 200, R"({"status":"ok"})"); });
  server.Post("/v1/api/workers/register",
              [this](const Request& q, Response& r, const ContentReader& c) { Register(q, r, c); });
  server.Post("/v1/api/steps/claim", [this](const Request& q, Response& r, const ContentReader& c) { Claim(q, r, c); });
  for (auto [suffix, call] : {std::pair{"started", LeaseCall::kStarted}, std::pair{"heartbeat", LeaseCall::kHeartbeat},
                              std::pair{"complete", LeaseCall::kComplete}, std::pair{"fail", LeaseCall::kFail}}) {
    server.Post(std::string(R"(/v1/api/steps/([^/]+)/)") + suffix,
                [this, call = call](const Request& q, Response& r, const ContentReader& c) { ReportOnLease(call, q, r, c); });
  }
  server.Put(R"(/v1/api/steps/([^/]+)/artifacts/([^/]+))",
             [this](const Request& q, Response& r, const ContentReader& c) { UploadArtifact(q, r, c); });
  server.Get(R"(/v1/api/artifacts/([^/]+))", [this](const Request& q, Response& r) { DownloadArtifact(q, r); });
  server.Post("/v1/api/runs", [this](const Request& q, Response& r, const ContentReader& c) { CreateRun(q, r, c); });
  server.Get(R"(/v1/api/runs/([^/]+))", [this](const Request& q, Response& r) { ShowRun(q, r, false); });
  server.Get(R"(/v1/api/runs/([^/]+)/journal)", [this](const Request& q, Response& r) { ShowRun(q, r, true); });
  server.Post(R"(/v1/api/runs/([^/]+)/cancel)",
              [this](const Request& q, Response& r, const ContentReader& c) { CancelRun(q, r, c); });

  // httplib's own refusals (unknown route, bad request line, ...) get the
  // protocol's error body too; handlers' bodies are left as they are.
  server.set_error_handler([](const Request&, Response& res) {
    if (!res.body.empty()) return;
    ApiError e;
    e.http_status = res.status;
    e.error = DefaultErrorName(res.status);
    e.message = res.status == 404 ? "no such endpoint" : "the request was refused (HTTP " + std::to_string(res.status) + ")";
    res.set_content(ToJson(e), "application/json");
  });
  server.set_exception_handler([](const Request& req, Response& res, std::exception_ptr ep) {
    std::string what = "unknown";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    spdlog::error("http: a handler threw on {} {}: {}", log::EscapeForLog(req.method), log::EscapeForLog(req.path),
                  log::EscapeForLog(what));
    ReplyError(res, ApiError::FromStatus(Status::Internal(what)));
  });
}

}  // namespace scimesh::coordinator

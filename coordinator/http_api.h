// HttpApi: the protocol's HTTP surface (docs/protocol.md) on the coordinator's
// HttpServer — authentication and scopes, body limits, JSON parsing, the claim
// long poll, artifact streaming, the run API, the audit log and error bodies.
// Business rules live in the Ledger; this layer only translates.
// Thread-safe: handlers run on the server's handler threads concurrently.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "coordinator/api_error.h"
#include "coordinator/artifact_store.h"
#include "coordinator/audit_log.h"
#include "coordinator/http_message.h"
#include "coordinator/http_server.h"
#include "coordinator/keys.h"
#include "coordinator/lease_tokens.h"
#include "coordinator/ledger.h"

namespace scimesh::coordinator {

struct ApiLimits {
  size_t max_body = 1 << 20;             // JSON request bodies
  int64_t max_artifact = 256LL << 20;    // artifact bodies
  int64_t max_claim_hold_ms = 24000;     // 4/5 of the request timeout
};

class HttpApi {
 public:
  // Borrows everything; all must outlive the server the routes go on.
  HttpApi(Ledger& ledger, KeyRing& keys, const LeaseTokens& tokens, ArtifactStore& artifacts, AuditLog& audit,
          ApiLimits limits)
      : ledger_(ledger), keys_(keys), tokens_(tokens), artifacts_(artifacts), audit_(audit), limits_(limits) {}

  // Adds every route to `server`.
  void Install(HttpServer& server);

 private:
  // A request body as read: `text` holds at most the limit; past it the
  // rest is read and dropped (up to kDrainCap) so that a client still
  // sending can read the refusal.
  struct Body {
    // kNoLength: neither Content-Length nor chunked, so the body's end is
    // unknowable without waiting for the client to close; it is not read.
    enum State { kRead, kTooLarge, kUnread, kNoLength } state = kRead;
    std::string text;
    // Left on the connection: the reply must close it.
    bool unread() const { return state == kUnread || state == kNoLength; }
  };
  // A request whose body's end is known: Content-Length or chunked.
  static bool HasBodyFraming(const HttpRequest& req);
  static constexpr size_t kDrainCap = 16u << 20;
  Body ReadBody(const HttpRequest& req, const ContentReader& reader, size_t limit);

  // A lease call's caller: the worker key's, or that lease's own token (any
  // other lease's is a 401), else the 401/403.
  ApiResult<LeaseCaller> IdentifyLeaseCaller(const HttpRequest& req, std::string_view lease_id);
  std::optional<LeaseCaller> AuthorizeLeaseCall(const HttpRequest& req, HttpResponse& res, std::string_view lease_id,
                                                bool body_unread);
  // The token of an `Authorization: Bearer` header (at most 1 KiB), if any.
  static std::optional<std::string> BearerToken(const HttpRequest& req);
  // The caller's key if it holds one of `scopes`, else the 401/403.
  ApiResult<KeyIdentity> IdentifyCaller(const HttpRequest& req, unsigned scopes);
  // The caller's key if it holds one of `scopes`; otherwise answers 401/403
  // (closing the connection when the body was left unread).
  std::optional<KeyIdentity> Authorize(const HttpRequest& req, HttpResponse& res, unsigned scopes,
                                       bool body_unread = false);
  // The body's text for a request parser (requests.h); when it was not read
  // whole, answers 411/413 and returns nullptr.
  const std::string* BodyText(HttpResponse& res, const Body& body);

  // A JSON call from a key: the key, and the body as `read` (requests.h) parsed it.
  template <typename Request>
  struct Call {
    KeyIdentity key;
    Request request;
  };
  // Reads the body, authorizes a key holding one of `scopes` and parses the
  // body with `read`; on any refusal answers it and returns nullopt.
  template <typename Request>
  std::optional<Call<Request>> Accept(const HttpRequest& req, HttpResponse& res, const ContentReader& reader,
                                      unsigned scopes, ApiResult<Request> (*read)(std::string_view));

  void Register(const HttpRequest& req, HttpResponse& res, const ContentReader& reader);
  void Claim(const HttpRequest& req, HttpResponse& res, const ContentReader& reader);
  void Demand(const HttpRequest& req, HttpResponse& res);
  void ReportOnLease(LeaseCall call, const HttpRequest& req, HttpResponse& res,
                 const ContentReader& reader);
  void UploadArtifact(const HttpRequest& req, HttpResponse& res, const ContentReader& reader);
  // Streams an upload's body into `in`; the refusal when it is too large,
  // does not fit the store, cannot be written or ends early.
  std::optional<ApiError> ReceiveArtifact(const ContentReader& reader, ArtifactStore::Incoming& in);
  void DownloadArtifact(const HttpRequest& req, HttpResponse& res);
  void CreateRun(const HttpRequest& req, HttpResponse& res, const ContentReader& reader);
  void ShowRun(const HttpRequest& req, HttpResponse& res, bool journal);
  void ListRuns(const HttpRequest& req, HttpResponse& res);
  void CancelRun(const HttpRequest& req, HttpResponse& res, const ContentReader& reader);

  Ledger& ledger_;
  KeyRing& keys_;
  const LeaseTokens& tokens_;
  ArtifactStore& artifacts_;
  AuditLog& audit_;
  ApiLimits limits_;
};

// Writes a JSON reply / the error body of docs/protocol.md "Errors" (with
// Retry-After for 429/503).
void ReplyJson(HttpResponse& res, int status, const std::string& json);
void ReplyError(HttpResponse& res, const ApiError& error);
// As ReplyError, for a request whose body was not read: closes the
// connection so the unread bytes are never taken for a next request.
void RefuseUnread(HttpResponse& res, const ApiError& error);

template <typename Request>
std::optional<HttpApi::Call<Request>> HttpApi::Accept(const HttpRequest& req, HttpResponse& res,
                                                      const ContentReader& reader, unsigned scopes,
                                                      ApiResult<Request> (*read)(std::string_view)) {
  Body raw = ReadBody(req, reader, limits_.max_body);
  auto key = Authorize(req, res, scopes, raw.unread());
  if (!key) return std::nullopt;
  const std::string* body = BodyText(res, raw);
  if (body == nullptr) return std::nullopt;
  auto parsed = read(*body);
  if (!parsed.ok()) {
    ReplyError(res, parsed.error());
    return std::nullopt;
  }
  return Call<Request>{std::move(*key), std::move(parsed).value()};
}

}  // namespace scimesh::coordinator

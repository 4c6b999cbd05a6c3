// HttpApi: the protocol's HTTP surface (docs/protocol.md) on a cpp-httplib
// server — authentication and scopes, body limits, JSON parsing, the claim
// long poll, artifact streaming, the run API, the audit log and error bodies.
// Business rules live in the Ledger; this layer only translates.
// Thread-safe: handlers run on the server's pool threads concurrently.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "coordinator/api_error.h"
#include "coordinator/artifact_store.h"
#include "coordinator/audit_log.h"
#include "coordinator/claim_waker.h"
#include "coordinator/json_input.h"
#include "coordinator/keys.h"
#include "coordinator/ledger.h"

namespace httplib {
class Server;
struct Request;
struct Response;
class ContentReader;
}  // namespace httplib

namespace scimesh::coordinator {

struct ApiLimits {
  size_t max_body = 1 << 20;             // JSON request bodies
  int64_t max_artifact = 256LL << 20;    // artifact bodies
  int64_t max_claim_hold_ms = 24000;     // 4/5 of the request timeout
  JsonLimits json;
};

class HttpApi {
 public:
  // Borrows everything; all must outlive the server the routes go on.
  HttpApi(Ledger& ledger, KeyRing& keys, ArtifactStore& artifacts, AuditLog& audit, ClaimWaker& waker,
          ApiLimits limits)
      : ledger_(ledger), keys_(keys), artifacts_(artifacts), audit_(audit), waker_(waker), limits_(limits) {}

  // Adds every route, the error body for httplib's own errors, and the
  // exception guard.
  void Install(httplib::Server& server);

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
  static bool HasBodyFraming(const httplib::Request& req);
  static constexpr size_t kDrainCap = 16u << 20;
  Body ReadBody(const httplib::Request& req, const httplib::ContentReader& reader, size_t limit);

  // The caller's key if it holds one of `scopes`, else the 401/403.
  ApiResult<KeyIdentity> IdentifyCaller(const httplib::Request& req, unsigned scopes);
  // The caller's key if it holds one of `scopes`; otherwise answers 401/403
  // (closing the connection when the body was left unread).
  std::optional<KeyIdentity> Authorize(const httplib::Request& req, httplib::Response& res, unsigned scopes,
                                       bool body_unread = false);
  // The parsed JSON body; on failure answers 413/400 and returns nullptr.
  std::unique_ptr<rapidjson::Document> ParseBody(httplib::Response& res, const Body& body);

  void Register(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader);
  void Claim(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader);
  void ReportOnLease(LeaseCall call, const httplib::Request& req, httplib::Response& res,
                 const httplib::ContentReader& reader);
  void UploadArtifact(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader);
  void DownloadArtifact(const httplib::Request& req, httplib::Response& res);
  void CreateRun(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader);
  void ShowRun(const httplib::Request& req, httplib::Response& res, bool journal);
  void CancelRun(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader);

  Ledger& ledger_;
  KeyRing& keys_;
  ArtifactStore& artifacts_;
  AuditLog& audit_;
  ClaimWaker& waker_;
  ApiLimits limits_;
};

// Writes a JSON reply / the error body of docs/protocol.md "Errors" (with
// Retry-After for 429/503).
void ReplyJson(httplib::Response& res, int status, const std::string& json);
void ReplyError(httplib::Response& res, const ApiError& error);
// As ReplyError, for a request whose body was not read: closes the
// connection so the unread bytes are never taken for a next request.
void RefuseUnread(httplib::Response& res, const ApiError& error);

}  // namespace scimesh::coordinator

// HttpApi: the run API (execute scope) — start, show, journal, cancel — with
// reads written to the audit log.
#include "coordinator/http_api.h"
#include "coordinator/identifiers.h"
#include "coordinator/requests.h"
#include "coordinator/responses.h"

namespace scimesh::coordinator {

void HttpApi::CreateRun(const HttpRequest& req, HttpResponse& res, const ContentReader& reader) {
  Body raw = ReadBody(req, reader, limits_.max_body);
  if (!Authorize(req, res, kScopeExecute, raw.unread())) return;
  auto body = ParseBody(res, raw);
  if (!body) return;
  auto parsed = ParseRunCreateRequest(*body);
  if (!parsed.ok()) return ReplyError(res, parsed.error());
  auto reply = ledger_.CreateRun(parsed.value());
  if (!reply.ok()) return ReplyError(res, reply.error());
  ReplyJson(res, 201, ToJson(reply.value()));
}

void HttpApi::ShowRun(const HttpRequest& req, HttpResponse& res, bool journal) {
  auto key = Authorize(req, res, kScopeExecute);
  if (!key) return;
  const std::string run_id = req.matches[1];
  if (!IsRunId(run_id)) {
    ReplyError(res, ApiError::NotFound("no run " + run_id));
  } else if (journal) {
    auto view = ledger_.Journal(run_id);
    view.ok() ? ReplyJson(res, 200, ToJson(view.value())) : ReplyError(res, view.error());
  } else {
    auto view = ledger_.ShowRun(run_id);
    view.ok() ? ReplyJson(res, 200, ToJson(view.value())) : ReplyError(res, view.error());
  }
  audit_.Record(key->name, req.method, req.path, res.status);
}

void HttpApi::CancelRun(const HttpRequest& req, HttpResponse& res, const ContentReader& reader) {
  // The body is ignored, but read so the connection stays usable.
  Body raw = ReadBody(req, reader, limits_.max_body);
  if (!Authorize(req, res, kScopeExecute, raw.unread())) return;
  if (raw.state != Body::kRead) {
    ParseBody(res, raw);  // answers 413
    return;
  }
  const std::string run_id = req.matches[1];
  if (!IsRunId(run_id)) return ReplyError(res, ApiError::NotFound("no run " + run_id));
  auto reply = ledger_.CancelRun(run_id);
  if (!reply.ok()) return ReplyError(res, reply.error());
  ReplyJson(res, 200, ToJson(reply.value()));
}

}  // namespace scimesh::coordinator

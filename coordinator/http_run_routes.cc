// HttpApi: the run API (execute scope; read scope for list, show and
// journal) — start, list, show, journal, cancel — each written to the audit
// log. Whose runs a key may see is the Ledger's decision (coordinator/tenancy.h).
#include "coordinator/http_api.h"
#include "coordinator/requests.h"
#include "protocol/wire/identifiers.h"
#include "protocol/wire/wire_json.h"

namespace scimesh::coordinator {

void HttpApi::CreateRun(const HttpRequest& req, HttpResponse& res, const ContentReader& reader) {
  auto call = Accept(req, res, reader, kScopeExecute, &ReadRunCreateRequest);
  if (!call) return;
  auto reply = ledger_.CreateRun(call->request, call->key);
  reply.ok() ? ReplyJson(res, 201, SerializeRunStatus(reply.value())) : ReplyError(res, reply.error());
  audit_.Record(call->key.name, req.method, req.path, res.status, reply.ok() ? reply.value().run_id : "");
}

void HttpApi::ShowRun(const HttpRequest& req, HttpResponse& res, bool journal) {
  auto key = Authorize(req, res, kScopeExecute | kScopeRead);
  if (!key) return;
  const std::string run_id = req.matches[1];
  if (!CheckRunId(run_id, "run_id").ok()) {
    ReplyError(res, ApiError::NotFound("no run " + run_id));
  } else if (journal) {
    auto view = ledger_.Journal(run_id, *key);
    view.ok() ? ReplyJson(res, 200, SerializeJournal(view.value())) : ReplyError(res, view.error());
  } else {
    auto view = ledger_.ShowRun(run_id, *key);
    view.ok() ? ReplyJson(res, 200, SerializeRunView(view.value())) : ReplyError(res, view.error());
  }
  audit_.Record(key->name, req.method, req.path, res.status);
}

void HttpApi::ListRuns(const HttpRequest& req, HttpResponse& res) {
  auto key = Authorize(req, res, kScopeExecute | kScopeRead);
  if (!key) return;
  auto query = ParseRunListQuery(req.params);
  if (!query.ok()) {
    ReplyError(res, query.error());
  } else {
    auto list = ledger_.ListRuns(query.value(), *key);
    list.ok() ? ReplyJson(res, 200, SerializeRunList(list.value())) : ReplyError(res, list.error());
  }
  audit_.Record(key->name, req.method, req.path, res.status);
}

void HttpApi::CancelRun(const HttpRequest& req, HttpResponse& res, const ContentReader& reader) {
  // The body is ignored, but read so the connection stays usable.
  Body raw = ReadBody(req, reader, limits_.max_body);
  auto key = Authorize(req, res, kScopeExecute, raw.unread());
  if (!key) return;
  if (raw.state != Body::kRead) {
    BodyText(res, raw);  // answers 413
    return;
  }
  const std::string run_id = req.matches[1];
  if (!CheckRunId(run_id, "run_id").ok()) {
    ReplyError(res, ApiError::NotFound("no run " + run_id));
  } else {
    auto reply = ledger_.CancelRun(run_id, *key);
    reply.ok() ? ReplyJson(res, 200, SerializeRunStatus(reply.value())) : ReplyError(res, reply.error());
  }
  audit_.Record(key->name, req.method, req.path, res.status);
}

}  // namespace scimesh::coordinator

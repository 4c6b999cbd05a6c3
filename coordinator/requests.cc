// Request bodies through protocol/'s parsers, with the server's limits.
#include "coordinator/requests.h"

#include <charconv>
#include <set>

#include "protocol/wire/identifiers.h"
#include "protocol/wire/wire_json.h"
#include "protocol/wire/wire_limits.h"

namespace scimesh::coordinator {
namespace {

template <typename T>
ApiResult<T> Answer(Result<T> parsed) {
  if (!parsed.ok()) return BadRequestFrom(parsed.status());
  return std::move(*parsed);
}

}  // namespace

ApiError BadRequestFrom(const Status& refusal) {
  if (refusal.field()) return ApiError::BadRequest(*refusal.field(), refusal.why());
  return ApiError::BadRequest("", refusal.message());
}

ApiResult<Registration> ReadRegisterRequest(std::string_view body) {
  auto parsed = scimesh::ParseRegisterRequest(body, kServerJsonLimits);
  if (!parsed.ok()) return BadRequestFrom(parsed.status());
  Registration reg{std::move(*parsed), {}};
  for (size_t i = 0; i < reg.request.definitions.size(); ++i) {
    auto def = Normalize(reg.request.definitions[i], "definitions[" + std::to_string(i) + "]");
    if (!def.ok()) return def.error();
    reg.definitions.push_back(std::move(def).value());
  }
  return reg;
}

ApiResult<ClaimRequest> ReadClaimRequest(std::string_view body) {
  return Answer(scimesh::ParseClaimRequest(body, kServerJsonLimits));
}

ApiResult<BeatRequest> ReadStartedRequest(std::string_view body) {
  auto r = Answer(scimesh::ParseBeatRequest(body, kServerJsonLimits));
  if (r.ok()) r.value().progress_json.reset();
  return r;
}

ApiResult<BeatRequest> ReadHeartbeatRequest(std::string_view body) {
  return Answer(scimesh::ParseBeatRequest(body, kServerJsonLimits));
}

ApiResult<CompleteRequest> ReadCompleteRequest(std::string_view body) {
  return Answer(scimesh::ParseCompleteRequest(body, kServerJsonLimits));
}

ApiResult<FailRequest> ReadFailRequest(std::string_view body) {
  return Answer(scimesh::ParseFailRequest(body, kServerJsonLimits));
}

ApiResult<RunCreateRequest> ReadRunCreateRequest(std::string_view body) {
  return Answer(scimesh::ParseRunCreateRequest(body, kServerJsonLimits));
}

ApiResult<LeaseIdentity> ParseArtifactQuery(const std::string* worker_id, const std::string* attempt) {
  if (worker_id == nullptr) return ApiError::BadRequest("worker_id", "is required in the query");
  if (Status s = CheckWorkerId(*worker_id, "worker_id"); !s.ok()) return BadRequestFrom(s);
  if (attempt == nullptr) return ApiError::BadRequest("attempt", "is required in the query");
  int64_t n = 0;
  auto [end, ec] = std::from_chars(attempt->data(), attempt->data() + attempt->size(), n);
  if (ec != std::errc() || end != attempt->data() + attempt->size() || n < 1 || n > kMaxWireInt) {
    return ApiError::BadRequest("attempt", "must be an integer from 1 to 2147483647");
  }
  return LeaseIdentity{*worker_id, n};
}

ApiResult<RunListQuery> ParseRunListQuery(const std::multimap<std::string, std::string>& params) {
  RunListQuery q;
  for (const char* name : {"workflow", "state", "limit"}) {
    if (params.count(name) > 1) return ApiError::BadRequest(name, "may be given once");
  }
  if (auto it = params.find("workflow"); it != params.end()) {
    if (Status s = CheckIdentifier(it->second, "workflow"); !s.ok()) return BadRequestFrom(s);
    q.workflow = it->second;
  }
  if (auto it = params.find("state"); it != params.end()) {
    if (!ParseRunState(it->second)) {
      return ApiError::BadRequest("state", "must be running, completed, failed, timed_out or cancelled");
    }
    q.state = it->second;
  }
  if (auto it = params.find("limit"); it != params.end()) {
    const std::string& text = it->second;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), q.limit);
    if (ec != std::errc() || end != text.data() + text.size() || q.limit < 1 || q.limit > kMaxRunList) {
      return ApiError::BadRequest("limit", "must be an integer from 1 to " + std::to_string(kMaxRunList));
    }
  }
  return q;
}

ApiResult<DemandQuery> ParseDemandQuery(const std::multimap<std::string, std::string>& params) {
  std::set<std::string> names;
  size_t given = 0;
  auto [first, last] = params.equal_range("workflow");
  for (auto it = first; it != last; ++it) {
    std::string_view rest = it->second;
    for (;;) {
      const size_t comma = rest.find(',');
      const std::string_view name = rest.substr(0, comma);
      if (Status s = CheckIdentifier(name, "workflow"); !s.ok()) return BadRequestFrom(s);
      if (++given > kMaxDemandWorkflows) {
        return ApiError::BadRequest("workflow", "at most " + std::to_string(kMaxDemandWorkflows) + " names");
      }
      names.emplace(name);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  return DemandQuery{std::vector<std::string>(names.begin(), names.end())};
}

}  // namespace scimesh::coordinator

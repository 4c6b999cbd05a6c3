// The fake coordinator's default answers, following docs/protocol.md.
#include "tests/client/fake_coordinator.h"

#include <cstdio>

#include "protocol/util/sha256.h"
#include "protocol/wire/wire_json.h"

namespace scimesh::testing {
namespace {

Reply Error(int status, const std::string& error, const std::string& message,
            std::optional<std::string> reason = std::nullopt, std::optional<std::string> outcome = std::nullopt) {
  ErrorBody e;
  e.error = error;
  e.message = message;
  e.reason = std::move(reason);
  e.outcome = std::move(outcome);
  return Reply::Json(status, SerializeErrorBody(e));
}

std::vector<std::string> Segments(const std::string& path) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    if (j > i) out.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

}  // namespace

std::string LeaseIdOf(const RecordedRequest& req) {
  auto s = Segments(req.path);  // v1 api steps <id> <call>
  return s.size() >= 5 && s[2] == "steps" ? s[3] : "";
}

std::string CallOf(const RecordedRequest& req) {
  auto s = Segments(req.path);
  return s.size() >= 5 && s[2] == "steps" ? s[4] : "";
}

FakeCoordinator::FakeCoordinator(std::string token, int64_t lease_ttl_ms, int64_t heartbeat_ms)
    : token_(std::move(token)), ttl_ms_(lease_ttl_ms), heartbeat_ms_(heartbeat_ms) {
  server_ = HostileServer::Start([this](const RecordedRequest& r) { return Handle(r); });
}

FakeCoordinator::~FakeCoordinator() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  server_.reset();
}

void FakeCoordinator::SetIntercept(Intercept intercept) {
  std::lock_guard<std::mutex> lock(mu_);
  intercept_ = std::move(intercept);
}

void FakeCoordinator::ApplyThenDrop(const std::string& call, int count) {
  std::lock_guard<std::mutex> lock(mu_);
  drops_[call] = count;
}

void FakeCoordinator::Offer(Lease lease) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    delivery_[lease.lease_id] = lease.delivery;
    offers_.push_back(std::move(lease));
  }
  cv_.notify_all();
}

std::string FakeCoordinator::AddBlob(const std::string& bytes) {
  const std::string sha = Sha256Hex(bytes);
  std::lock_guard<std::mutex> lock(mu_);
  blobs_[sha] = bytes;
  return url() + "/v1/api/artifacts/" + sha;
}

Lease FakeCoordinator::MakeLease(const std::string& step_id, Delivery delivery) {
  int id;
  {
    std::lock_guard<std::mutex> lock(mu_);
    id = ++next_id_;
  }
  char hex[17];
  (void)std::snprintf(hex, sizeof(hex), "%016x", id);  // at most 16 characters
  Lease l;
  l.lease_id = std::string("l_") + hex;
  l.run_id = "r_00000000000000a1";
  l.step_id = step_id;
  l.workflow = "wf";
  l.version = "1";
  l.attempt = 1;
  l.input_json = R"({"n":3})";
  l.previous_json = "{}";
  l.run_state_json = "{}";
  l.correlation_json = "null";
  l.idempotency_key = l.run_id + "/" + step_id;
  l.trace_id = std::string(32, 'a');
  l.span_id = std::string(16, 'b');
  l.delivery = delivery;
  l.walltime_s = 60;
  l.lease_ttl_ms = ttl_ms_;
  l.heartbeat_ms = heartbeat_ms_;
  l.lease_expires_at = "2026-11-29T08:00:30.000Z";
  l.lease_token = LeaseTokenOf(l.lease_id);
  return l;
}

std::string FakeCoordinator::LeaseTokenOf(const std::string& lease_id) { return "lt_" + lease_id + "_1_fake"; }

bool FakeCoordinator::Authorized(const RecordedRequest& req) const {
  const std::string auth = req.Header("authorization");
  if (auth == "Bearer " + token_) return true;
  // A lease's token, for that lease's own calls (/v1/api/steps/<lease>/...).
  const std::string prefix = "/v1/api/steps/";
  if (req.path.rfind(prefix, 0) != 0) return false;
  const std::string lease = req.path.substr(prefix.size(), req.path.find('/', prefix.size()) - prefix.size());
  return lease != "claim" && auth == "Bearer " + LeaseTokenOf(lease);
}

std::optional<std::string> FakeCoordinator::Outcome(const std::string& lease_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = outcomes_.find(lease_id);
  if (it == outcomes_.end()) return std::nullopt;
  return it->second;
}

std::optional<FailRequest> FakeCoordinator::FailOf(const std::string& lease_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = fails_.find(lease_id);
  if (it == fails_.end()) return std::nullopt;
  return it->second;
}

std::optional<CompleteRequest> FakeCoordinator::CompleteOf(const std::string& lease_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = completes_.find(lease_id);
  if (it == completes_.end()) return std::nullopt;
  return it->second;
}

size_t FakeCoordinator::CallsFor(const std::string& lease_id, const std::string& call) const {
  return server_->Count([&](const RecordedRequest& r) { return LeaseIdOf(r) == lease_id && CallOf(r) == call; });
}

Reply FakeCoordinator::Handle(const RecordedRequest& req) {
  Intercept intercept;
  {
    std::lock_guard<std::mutex> lock(mu_);
    intercept = intercept_;
  }
  if (intercept) {
    if (auto r = intercept(req)) return *r;
  }
  Reply reply = Default(req);
  std::lock_guard<std::mutex> lock(mu_);
  auto drop = drops_.find(CallOf(req));
  if (drop != drops_.end() && drop->second > 0) {
    --drop->second;
    return Reply::Drop();
  }
  return reply;
}

Reply FakeCoordinator::Default(const RecordedRequest& req) {
  if (!Authorized(req)) return Error(401, "unauthorized", "no or unknown key");
  if (req.method == "POST" && req.path == "/v1/api/workers/register") {
    auto r = ParseRegisterRequest(req.body);
    if (!r.ok()) return Error(400, "bad_request", r.status().message());
    return Reply::Json(200, SerializeRegisterResponse({r->worker_id, ttl_ms_, heartbeat_ms_}));
  }
  if (req.method == "POST" && req.path == "/v1/api/steps/claim") {
    auto r = ParseClaimRequest(req.body);
    if (!r.ok()) return Error(400, "bad_request", r.status().message());
    std::unique_lock<std::mutex> lock(mu_);
    // Long poll, woken by Offer(); capped so tests never wait long.
    cv_.wait_for(lock, Millis(std::min<int64_t>(r->wait_ms, 300)), [&] { return stopping_ || !offers_.empty(); });
    ClaimResponse resp;
    while (!offers_.empty() && static_cast<int64_t>(resp.leases.size()) < r->max) {
      resp.leases.push_back(std::move(offers_.front()));
      offers_.pop_front();
    }
    return Reply::Json(200, SerializeClaimResponse(resp));
  }
  if (req.method == "GET" && req.path.rfind("/v1/api/artifacts/", 0) == 0) {
    const std::string sha = req.path.substr(std::string("/v1/api/artifacts/").size());
    std::lock_guard<std::mutex> lock(mu_);
    auto it = blobs_.find(sha);
    if (it == blobs_.end()) return Error(404, "not_found", "no such artifact");
    Reply r = Reply::Bytes(200, it->second, "application/octet-stream");
    r.headers.emplace_back("X-Scimesh-Sha256", sha);
    return r;
  }
  const std::string lease_id = LeaseIdOf(req);
  const std::string call = CallOf(req);
  if (lease_id.empty()) return Error(404, "not_found", "no such endpoint");
  std::lock_guard<std::mutex> lock(mu_);
  auto done = outcomes_.find(lease_id);
  if (done != outcomes_.end()) {
    return Error(409, "conflict", "already " + done->second, "already_applied", done->second);
  }
  if (call == "started") started_.insert(lease_id);
  if ((call == "complete" || call == "fail") && delivery_[lease_id] == Delivery::kAtMostOnce &&
      started_.count(lease_id) == 0) {
    return Error(409, "conflict", "at_most_once attempt never started", "not_started");
  }
  if (call == "started" || call == "heartbeat") {
    return Reply::Json(200, SerializeExtendResponse({"2026-11-29T08:00:41.300Z", ttl_ms_}));
  }
  if (call == "artifacts" && req.method == "PUT") {
    const std::string sha = Sha256Hex(req.body);
    if (req.Header("x-scimesh-sha256") != sha) return Error(400, "checksum_mismatch", "sha256 differs");
    blobs_[sha] = req.body;
    auto segs = Segments(req.path);
    ArtifactRef a{segs.size() > 5 ? segs[5] : "", url() + "/v1/api/artifacts/" + sha, sha,
                  static_cast<int64_t>(req.body.size()), req.Header("content-type")};
    return Reply::Json(201, SerializeArtifactRef(a));
  }
  if (call == "complete") {
    auto r = ParseCompleteRequest(req.body);
    if (!r.ok()) return Error(400, "bad_request", r.status().message());
    outcomes_[lease_id] = "completed";
    completes_[lease_id] = *r;
    return Reply::Json(200, SerializeCompleteResponse({"completed"}));
  }
  if (call == "fail") {
    auto r = ParseFailRequest(req.body);
    if (!r.ok()) return Error(400, "bad_request", r.status().message());
    outcomes_[lease_id] = "failed";
    fails_[lease_id] = *r;
    return Reply::Json(200, SerializeFailResponse({"failed", true, std::nullopt}));
  }
  return Error(404, "not_found", "no such call");
}

}  // namespace scimesh::testing

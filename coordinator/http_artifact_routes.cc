// HttpApi: artifact upload (streamed, hashed, checked) and download.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "coordinator/http_api.h"
#include "protocol/wire/identifiers.h"
#include "protocol/wire/wire_json.h"

namespace scimesh::coordinator {
namespace {

bool IsMediaType(const std::string& s) {
  if (s.empty() || s.size() > 255) return false;
  for (char c : s) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

const std::string* Param(const HttpRequest& req, const char* name) {
  auto it = req.params.find(name);
  return it == req.params.end() ? nullptr : &it->second;
}

ApiError TooLarge(int64_t max_artifact) {
  return ApiError::TooLarge("the artifact is larger than " + std::to_string(max_artifact) + " bytes");
}

// What an upload's path, query and headers say, checked.
struct UploadHead {
  std::string name;
  std::string sha256;
  std::string media_type;
  LeaseIdentity identity;   // worker_id and attempt, from the query
  int64_t declared_size = -1;  // Content-Length; -1 when chunked
};

ApiResult<UploadHead> ReadUploadHead(const HttpRequest& req, const std::string& lease_id, int64_t max_artifact) {
  UploadHead head;
  head.name = req.matches[2];
  if (!CheckLeaseId(lease_id, "lease_id").ok()) return ApiError::NotFound("no lease " + lease_id);
  if (!CheckArtifactName(head.name, "name").ok()) {
    return ApiError::BadRequest("name", "must be 1-128 characters of [A-Za-z0-9._-], not starting with '.'");
  }
  head.sha256 = req.get_header_value("X-Scimesh-Sha256");
  if (!CheckSha256(head.sha256, "sha256").ok()) {
    return ApiError::BadRequest("X-Scimesh-Sha256", "must be 64 lowercase hex digits");
  }
  head.media_type = req.get_header_value("Content-Type");
  if (head.media_type.empty()) head.media_type = "application/octet-stream";
  if (!IsMediaType(head.media_type)) return ApiError::BadRequest("Content-Type", "is not a media type");
  auto query = ParseArtifactQuery(Param(req, "worker_id"), Param(req, "attempt"));
  if (!query.ok()) return query.error();
  head.identity = query.value();
  if (req.has_header("Content-Length")) {
    const std::string declared = req.get_header_value("Content-Length");
    if (declared.size() > 18 || std::stoll("0" + declared) > max_artifact) return TooLarge(max_artifact);
    head.declared_size = std::stoll("0" + declared);
  }
  return head;
}

}  // namespace

void HttpApi::UploadArtifact(const HttpRequest& req, HttpResponse& res, const ContentReader& reader) {
  // A refusal before the bytes are stored drains a body of moderate size,
  // so the client (still sending) can read the answer; a larger one is cut
  // off by closing the connection.
  auto refuse = [&](const ApiError& e) {
    Body drained = ReadBody(req, reader, 0);
    drained.unread() ? RefuseUnread(res, e) : ReplyError(res, e);
  };
  if (!HasBodyFraming(req)) return RefuseUnread(res, ApiError::LengthRequired());
  const std::string lease_id = req.matches[1];
  auto who = IdentifyLeaseCaller(req, lease_id);
  if (!who.ok()) return refuse(who.error());
  auto head = ReadUploadHead(req, lease_id, limits_.max_artifact);
  if (!head.ok()) return refuse(head.error());
  const UploadHead& h = head.value();
  LeaseCaller caller = who.value();
  caller.worker_id = h.identity.worker_id;
  caller.attempt = h.identity.attempt;
  // The lease checks first, so a fenced worker's bytes are never stored.
  auto checked = ledger_.CheckUpload(lease_id, caller, h.name, h.sha256, h.declared_size);
  if (!checked.ok()) return refuse(checked.error());
  if (!artifacts_.Fits(std::max<int64_t>(0, h.declared_size))) return refuse(ApiError::InsufficientStorage());

  auto incoming = artifacts_.Begin();
  if (!incoming.ok()) {
    spdlog::error("artifacts: cannot receive an upload: {}", incoming.status().ToString());
    return refuse(ApiError::FromStatus(incoming.status()));
  }
  ArtifactStore::Incoming& in = **incoming;
  if (auto error = ReceiveArtifact(reader, in)) return RefuseUnread(res, *error);
  Status stored = artifacts_.Commit(in, h.sha256);
  if (stored.code() == Code::kDataLoss) {
    return ReplyError(res, ApiError::ChecksumMismatch(stored.message() + ", not the declared " + h.sha256));
  }
  if (!stored.ok()) {
    spdlog::error("artifacts: cannot store an upload: {}", stored.ToString());
    return ReplyError(res, ApiError::FromStatus(stored));
  }
  auto recorded = ledger_.RecordUpload(lease_id, caller, h.name, h.sha256, in.size(), h.media_type);
  if (!recorded.ok()) return ReplyError(res, recorded.error());
  ReplyJson(res, recorded.value().created ? 201 : 200, SerializeArtifactRef(recorded.value().ref));
}

std::optional<ApiError> HttpApi::ReceiveArtifact(const ContentReader& reader, ArtifactStore::Incoming& in) {
  bool over = false, full = false;
  Status write_status;
  bool complete = reader([&](const char* data, size_t n) {
    if (in.size() + static_cast<int64_t>(n) > limits_.max_artifact) {
      over = true;
      return false;
    }
    if (!artifacts_.Fits(in.size() + static_cast<int64_t>(n))) {
      full = true;
      return false;
    }
    write_status = in.Append(data, n);
    return write_status.ok();
  });
  if (over) return TooLarge(limits_.max_artifact);
  if (full) return ApiError::InsufficientStorage();
  if (!write_status.ok()) {
    spdlog::error("artifacts: cannot store an upload: {}", write_status.ToString());
    return ApiError::FromStatus(write_status);
  }
  if (!complete) return ApiError::BadRequest("", "the artifact body could not be read");
  return std::nullopt;
}

void HttpApi::DownloadArtifact(const HttpRequest& req, HttpResponse& res) {
  auto key = Authorize(req, res, kScopeWorker | kScopeExecute | kScopeRead);
  if (!key) return;
  const std::string sha256 = req.matches[1];
  // Reads by people (keys without the worker scope) are audited; workers
  // fetching their inputs are not.
  const bool audited = (key->scopes & kScopeWorker) == 0;
  auto finish = [&](const ApiError* error) {
    if (error != nullptr) ReplyError(res, *error);
    if (audited) audit_.Record(key->name, req.method, req.path, res.status);
  };
  if (!CheckSha256(sha256, "sha256").ok()) {
    ApiError e = ApiError::NotFound("no artifact " + sha256);
    return finish(&e);
  }
  auto media_type = ledger_.FindArtifact(sha256, *key);
  if (!media_type.ok()) return finish(&media_type.error());
  int fd = ::open(artifacts_.PathOf(sha256).c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    if (fd >= 0) ::close(fd);
    spdlog::error("artifacts: artifact {} is recorded but its file is missing", sha256);
    ApiError e = ApiError::NotFound("artifact " + sha256 + " is not in the store");
    return finish(&e);
  }
  res.status = 200;
  res.set_header("X-Scimesh-Sha256", sha256);
  res.set_content_provider(
      static_cast<size_t>(st.st_size), media_type.value(),
      [fd](size_t offset, size_t length, DataSink& sink) {
        char buf[64 * 1024];
        size_t n = std::min(length, sizeof buf);
        ssize_t got = ::pread(fd, buf, n, static_cast<off_t>(offset));
        if (got <= 0) return false;
        return sink.write(buf, static_cast<size_t>(got));
      },
      [fd](bool) { ::close(fd); });
  finish(nullptr);
}

}  // namespace scimesh::coordinator

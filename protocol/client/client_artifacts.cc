// Client artifact transfers: upload with a declared SHA-256, download with the
// SHA-256 computed while streaming and redirects that never carry the token
// to another origin.
#include "protocol/client/client.h"
#include "protocol/client/coordinator_call.h"
#include "protocol/util/log.h"
#include "protocol/wire/identifiers.h"
#include "protocol/wire/wire_json.h"

namespace scimesh {
namespace {

constexpr Millis kTransferTimeout = std::chrono::hours(24);

bool IsRedirect(long status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

// A header value must not be able to start another header.
bool IsHeaderSafe(std::string_view v) {
  for (char c : v) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  }
  return true;
}

}  // namespace

Result<LeaseReply<ArtifactRef>> Client::UploadArtifact(const LeaseCall& call, std::string_view name, int fd,
                                                       std::string_view media_type) {
  SCIMESH_RETURN_IF_ERROR(CheckArtifactName(name, "artifact name"));
  const std::string type = media_type.empty() ? "application/octet-stream" : std::string(media_type);
  if (!IsHeaderSafe(type) || type.size() > 255) return Status::InvalidArgument("artifact media type is not a valid header value");
  // Hash first: the coordinator checks the bytes against what we declare.
  SCIMESH_ASSIGN_OR_RETURN(FileDigest digest, Sha256OfFd(fd));

  const std::string what = "upload " + std::string(name) + " for " + call.lease_id;
  HttpRequest req = CoordinatorRequest(
      options_, "PUT",
      "/steps/" + EscapeComponent(call.lease_id) + "/artifacts/" + EscapeComponent(name) +
          "?worker_id=" + EscapeComponent(call.worker_id) + "&attempt=" + std::to_string(call.attempt),
      "");
  req.headers = {"Content-Type: " + type, "X-Scimesh-Sha256: " + digest.sha256, "Accept: application/json"};
  req.upload_fd = fd;
  req.upload_size = digest.size;
  req.low_speed_bytes = options_.low_speed_bytes;
  req.low_speed_time = options_.low_speed_time;
  auto r = WithRetries(what, BudgetEnd(call.deadline), false, [&](Millis cap) {
    req.timeout = std::min(kTransferTimeout, cap);
    return session_->Perform(req);
  });
  SCIMESH_ASSIGN_OR_RETURN(auto reply, LeaseAnswer(what, r, ParseArtifactRef));
  if (reply.applied) {
    const ArtifactRef& a = *reply.applied;
    // `complete` must carry exactly what the coordinator stored: if its record
    // differs from the bytes we sent, the upload is not confirmed.
    if (a.name != name || a.sha256 != digest.sha256 || a.size != digest.size) {
      return Status::DataLoss(what + ": the coordinator recorded " + a.name + " sha256 " + a.sha256 + " size " +
                              std::to_string(a.size) + ", but " + std::to_string(digest.size) +
                              " bytes with sha256 " + digest.sha256 + " were sent");
    }
  }
  return reply;
}

Result<FileDigest> Client::DownloadArtifact(const InputArtifact& artifact, int fd,
                                            std::optional<LeaseDeadline> deadline) {
  const std::string what = "download " + artifact.name + " of step " + artifact.step_id;
  auto first = ParseUrl(artifact.uri);
  if (!first.ok()) return first.status().WithContext(what);
  Sha256 hash;
  HttpRequest req;
  req.method = "GET";
  req.download_fd = fd;
  req.download_hash = &hash;
  req.download_limit = artifact.size;
  req.low_speed_bytes = options_.low_speed_bytes;
  req.low_speed_time = options_.low_speed_time;
  req.max_body_bytes = size_t{64} * 1024;  // error bodies only: the bytes go to the file

  // One try follows the redirect chain from the start; a retry starts over.
  auto r = WithRetries(what, BudgetEnd(deadline), false, [&](Millis cap) -> Result<HttpResponse> {
    Url url = *first;
    for (int hop = 0;; ++hop) {
      SCIMESH_RETURN_IF_ERROR(CheckTransportPolicy(url, options_.allow_insecure_http));
      req.url = url.text;
      // The token goes only to the coordinator's own scheme, host and port:
      // never to a storage host or a downgraded scheme a redirect names.
      const bool same_origin = SameOrigin(url, base_);
      req.bearer = same_origin && !options_.token.empty() ? &options_.token.secret() : nullptr;
      req.peer = same_origin ? "the coordinator" : "the artifact host";
      req.timeout = std::min(kTransferTimeout, cap);
      SCIMESH_ASSIGN_OR_RETURN(HttpResponse resp, session_->Perform(req));
      if (!IsRedirect(resp.status)) return resp;
      if (hop >= options_.max_redirects) {
        return Status::InvalidArgument("more than " + std::to_string(options_.max_redirects) + " redirects");
      }
      if (resp.redirect_url.empty()) return Status::InvalidArgument("a redirect without a Location");
      SCIMESH_ASSIGN_OR_RETURN(url, ResolveUrl(url, resp.redirect_url));
      log::For("client")->debug("{}: redirected to {}://{}:{}{}", what, url.scheme, url.host, url.port,
                                SameOrigin(url, base_) ? "" : " (without the token)");
    }
  });
  if (!r.ok()) return r.status();  // WithRetries named `what` already
  if (r->status / 100 != 2) return StatusFromErrorResponse(what, *r);
  FileDigest got{hash.HexDigest(), r->downloaded};
  if (got.size != artifact.size) {
    return Status::DataLoss(what + ": " + std::to_string(got.size) + " bytes, the lease promised " +
                            std::to_string(artifact.size));
  }
  if (got.sha256 != artifact.sha256) {
    return Status::DataLoss(what + ": sha256 " + got.sha256 + " does not match the lease's " + artifact.sha256);
  }
  return got;
}

}  // namespace scimesh

// The libcurl exchange: timeouts, limits, headers, streaming to and from files.
#include "protocol/client/http_exchange.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "protocol/util/sha256.h"
#include "protocol/util/url.h"

namespace scimesh {
namespace {

constexpr size_t kMaxErrorBody = size_t{64} * 1024;

// "scheme://host:port" of `url`: where a transport error happened, without
// the path or query (an artifact URL may carry a signature there).
std::string OriginOf(const std::string& url) {
  auto parsed = ParseUrl(url);
  if (!parsed.ok()) return "an unparsable URL";
  return parsed->scheme + "://" + parsed->host + ":" + std::to_string(parsed->port);
}

// libcurl's own words: the error buffer (which names host and port), plus the
// code's text when the buffer does not already say it.
std::string CurlReason(CURLcode code, const char* errbuf) {
  std::string generic = curl_easy_strerror(code);
  if (errbuf[0] == '\0') return generic;
  std::string detail = errbuf;
  while (!detail.empty() && (detail.back() == '\n' || detail.back() == ' ')) detail.pop_back();
  if (detail.find(generic) == std::string::npos) detail += " (" + generic + ")";
  return detail;
}

// Connections are close-on-exec from their first instant (libcurl before
// 8.17 opens them without it): a program started meanwhile never holds one.
curl_socket_t OpenCloexecSocket(void* /*user*/, curlsocktype /*purpose*/, curl_sockaddr* address) {
  return ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

}  // namespace

size_t HttpExchange::OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* ex = static_cast<HttpExchange*>(user);
  std::string line(data, size * n);
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.pop_back();
  if (line.rfind("HTTP/", 0) == 0) {
    ex->resp_.headers.clear();  // a new response (e.g. after 100 Continue)
    return size * n;
  }
  auto colon = line.find(':');
  if (colon == std::string::npos) return size * n;
  std::string name = line.substr(0, colon);
  std::transform(name.begin(), name.end(), name.begin(), ::tolower);
  auto start = line.find_first_not_of(" \t", colon + 1);
  ex->resp_.headers[name] = start == std::string::npos ? "" : line.substr(start);
  return size * n;
}

size_t HttpExchange::OnBody(char* data, size_t size, size_t n, void* user) {
  auto* ex = static_cast<HttpExchange*>(user);
  const size_t len = size * n;
  long status = 0;
  curl_easy_getinfo(ex->curl_, CURLINFO_RESPONSE_CODE, &status);
  const HttpRequest& req = ex->req_;
  HttpResponse& resp = ex->resp_;
  if (req.download_fd >= 0 && status >= 200 && status < 300) {
    if (req.download_limit >= 0 && resp.downloaded + static_cast<int64_t>(len) > req.download_limit) {
      ex->download_too_large_ = true;
      return 0;  // abort: more bytes than the lease promised
    }
    size_t done = 0;
    while (done < len) {
      ssize_t w = ::pwrite(req.download_fd, data + done, len - done, resp.downloaded + static_cast<int64_t>(done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        ex->download_errno_ = errno;
        return 0;
      }
      done += static_cast<size_t>(w);
    }
    if (req.download_hash != nullptr) req.download_hash->Update(data, len);
    resp.downloaded += static_cast<int64_t>(len);
    return len;
  }
  if (status < 200 || status >= 300) {
    // An error body only explains the status: keep its start, drop the rest,
    // so a big 5xx page is still a (retryable) 5xx.
    const size_t room = resp.body.size() < kMaxErrorBody ? kMaxErrorBody - resp.body.size() : 0;
    resp.body.append(data, std::min(len, room));
    return len;
  }
  if (resp.body.size() + len > req.max_body_bytes) {
    ex->body_too_large_ = true;
    return 0;  // abort: a hostile or broken peer must not exhaust memory
  }
  resp.body.append(data, len);
  return len;
}

size_t HttpExchange::OnRead(char* buffer, size_t size, size_t n, void* user) {
  auto* ex = static_cast<HttpExchange*>(user);
  const int64_t left = ex->req_.upload_size - ex->upload_offset_;
  if (left <= 0) return 0;
  const size_t want = std::min(size * n, static_cast<size_t>(left));
  for (;;) {
    ssize_t r = ::pread(ex->req_.upload_fd, buffer, want, ex->upload_offset_);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      ex->upload_read_failed_ = true;  // the file shrank or failed: never send short
      return CURL_READFUNC_ABORT;
    }
    ex->upload_offset_ += r;
    return static_cast<size_t>(r);
  }
}

int HttpExchange::OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* ex = static_cast<HttpExchange*>(user);
  return ex->interrupted_ != nullptr && ex->interrupted_->load() ? 1 : 0;
}

HttpExchange::HttpExchange(CURL* curl, const HttpSessionOptions& options, const HttpRequest& req,
                           const std::atomic<bool>* interrupted)
    : curl_(curl), req_(req), interrupted_(interrupted), clock_(ClockOr(options.clock)) {
  CURL* c = curl;
  curl_easy_setopt(c, CURLOPT_URL, req.url.c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);  // threads: no SIGALRM for DNS timeouts
  curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, OpenCloexecSocket);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);  // redirects are decided above this layer
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options.connect_timeout.count()));
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(std::max<int64_t>(1, req.timeout.count())));
  if (req.low_speed_bytes > 0) {
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, static_cast<long>(req.low_speed_bytes));
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, static_cast<long>(req.low_speed_time.count()));
  }
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, options.insecure_tls ? 0L : 1L);
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, options.insecure_tls ? 0L : 2L);
  if (!options.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, options.ca_file.c_str());
  curl_easy_setopt(c, CURLOPT_USERAGENT, options.user_agent.c_str());
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf_);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, this);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, this);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, OnProgress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, this);

  for (const auto& h : req.headers) headers_ = curl_slist_append(headers_, h.c_str());
  headers_ = curl_slist_append(headers_, "Expect:");  // no 100-continue round trip
  if (req.bearer != nullptr) {
    auth_ = "Authorization: Bearer " + *req.bearer;
    headers_ = curl_slist_append(headers_, auth_.c_str());
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers_);

  if (req.method == "POST") {
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, req.body.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  } else if (req.method == "PUT") {
    curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(c, CURLOPT_READFUNCTION, OnRead);
    curl_easy_setopt(c, CURLOPT_READDATA, this);
    curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(req.upload_size));
  } else {
    curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
  }
  // Bigger reads for bulk bytes: fewer callbacks, writes and hash updates.
  if (req.download_fd >= 0) curl_easy_setopt(c, CURLOPT_BUFFERSIZE, 256L * 1024);
}

HttpExchange::~HttpExchange() {
  curl_easy_setopt(curl_, CURLOPT_HTTPHEADER, nullptr);
  curl_easy_setopt(curl_, CURLOPT_ERRORBUFFER, nullptr);
  curl_slist_free_all(headers_);
  // Drop the header copy holding the token as soon as it is no longer needed.
  std::fill(auth_.begin(), auth_.end(), '\0');
}

Status HttpExchange::Prepare() {
  if (req_.download_fd >= 0) {
    if (::ftruncate(req_.download_fd, 0) != 0) return Status::Io("cannot truncate the download file");
    if (req_.download_hash != nullptr) req_.download_hash->Reset();
  }
  resp_.sent_at = clock_.Now();
  return Status::Ok();
}

Result<HttpResponse> HttpExchange::Finish(CURLcode code) {
  if (code != CURLE_OK) return TransportError(code);
  curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &resp_.status);
  char* location = nullptr;
  if (curl_easy_getinfo(curl_, CURLINFO_REDIRECT_URL, &location) == CURLE_OK && location != nullptr) {
    resp_.redirect_url = location;
  }
  return std::move(resp_);
}

Status HttpExchange::TransportError(CURLcode code) const {
  const HttpRequest& req = req_;
  if (body_too_large_) {
    return Status::InvalidArgument("response body larger than " + std::to_string(req.max_body_bytes) + " bytes");
  }
  if (download_too_large_) {
    return Status::DataLoss("more bytes than the declared size " + std::to_string(req.download_limit));
  }
  if (upload_read_failed_) return Status::Io("reading the upload failed: the file shrank or is unreadable");
  if (download_errno_ != 0) {
    return Status::Io(std::string("writing the download failed: ") + std::strerror(download_errno_));
  }
  const std::string where = req.peer + " at " + OriginOf(req.url);
  const std::string why = CurlReason(code, errbuf_);
  switch (code) {
    case CURLE_ABORTED_BY_CALLBACK: return Status::Cancelled("interrupted");
    case CURLE_OPERATION_TIMEDOUT: return Status::Timeout("no answer in time from " + where + ": " + why);
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CACERT_BADFILE:
      return Status::PermissionDenied("TLS verification of " + where + " failed: " + why);
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
      return Status::InvalidArgument("bad URL for " + req.peer + ": " + why);
    default:
      return Status::Unavailable("cannot reach " + where + ": " + why);
  }
}

}  // namespace scimesh

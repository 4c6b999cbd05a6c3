// The libcurl exchange: timeouts, limits, headers, streaming to and from files.
#include "protocol/http_session.h"

#include <curl/curl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "protocol/sha256.h"
#include "protocol/url.h"

namespace scimesh {
namespace {

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

constexpr size_t kMaxErrorBody = size_t{64} * 1024;

// State of one exchange, reached from libcurl's callbacks.
struct Exchange {
  CURL* curl = nullptr;
  const HttpRequest* req = nullptr;
  const std::atomic<bool>* interrupted = nullptr;
  HttpResponse resp;
  int64_t upload_offset = 0;
  bool body_too_large = false;
  bool download_too_large = false;
  int download_errno = 0;
  bool upload_read_failed = false;
};

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  std::string line(data, size * n);
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.pop_back();
  if (line.rfind("HTTP/", 0) == 0) {
    ex->resp.headers.clear();  // a new response (e.g. after 100 Continue)
    return size * n;
  }
  auto colon = line.find(':');
  if (colon == std::string::npos) return size * n;
  std::string name = line.substr(0, colon);
  std::transform(name.begin(), name.end(), name.begin(), ::tolower);
  auto start = line.find_first_not_of(" \t", colon + 1);
  ex->resp.headers[name] = start == std::string::npos ? "" : line.substr(start);
  return size * n;
}

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  const size_t len = size * n;
  long status = 0;
  curl_easy_getinfo(ex->curl, CURLINFO_RESPONSE_CODE, &status);
  const HttpRequest& req = *ex->req;
  if (req.download_fd >= 0 && status >= 200 && status < 300) {
    if (req.download_limit >= 0 && ex->resp.downloaded + static_cast<int64_t>(len) > req.download_limit) {
      ex->download_too_large = true;
      return 0;  // abort: more bytes than the lease promised
    }
    size_t done = 0;
    while (done < len) {
      ssize_t w = ::pwrite(req.download_fd, data + done, len - done, ex->resp.downloaded + static_cast<int64_t>(done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        ex->download_errno = errno;
        return 0;
      }
      done += static_cast<size_t>(w);
    }
    if (req.download_hash != nullptr) req.download_hash->Update(data, len);
    ex->resp.downloaded += static_cast<int64_t>(len);
    return len;
  }
  if (status < 200 || status >= 300) {
    // An error body only explains the status: keep its start, drop the rest,
    // so a big 5xx page is still a (retryable) 5xx.
    const size_t room = ex->resp.body.size() < kMaxErrorBody ? kMaxErrorBody - ex->resp.body.size() : 0;
    ex->resp.body.append(data, std::min(len, room));
    return len;
  }
  if (ex->resp.body.size() + len > req.max_body_bytes) {
    ex->body_too_large = true;
    return 0;  // abort: a hostile or broken peer must not exhaust memory
  }
  ex->resp.body.append(data, len);
  return len;
}

size_t OnRead(char* buffer, size_t size, size_t n, void* user) {
  auto* ex = static_cast<Exchange*>(user);
  const int64_t left = ex->req->upload_size - ex->upload_offset;
  if (left <= 0) return 0;
  const size_t want = std::min(size * n, static_cast<size_t>(left));
  for (;;) {
    ssize_t r = ::pread(ex->req->upload_fd, buffer, want, ex->upload_offset);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      ex->upload_read_failed = true;  // the file shrank or failed: never send short
      return CURL_READFUNC_ABORT;
    }
    ex->upload_offset += r;
    return static_cast<size_t>(r);
  }
}

int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* ex = static_cast<Exchange*>(user);
  return ex->interrupted->load() ? 1 : 0;
}

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

Status TransportError(CURLcode code, const char* errbuf, const Exchange& ex, const HttpRequest& req) {
  if (ex.body_too_large) {
    return Status::InvalidArgument("response body larger than " + std::to_string(req.max_body_bytes) + " bytes");
  }
  if (ex.download_too_large) {
    return Status::DataLoss("more bytes than the declared size " + std::to_string(req.download_limit));
  }
  if (ex.upload_read_failed) return Status::Io("reading the upload failed: the file shrank or is unreadable");
  if (ex.download_errno != 0) {
    return Status::Io(std::string("writing the download failed: ") + std::strerror(ex.download_errno));
  }
  const std::string where = req.peer + " at " + OriginOf(req.url);
  const std::string why = CurlReason(code, errbuf);
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

}  // namespace

struct HttpSession::Impl {
  CURL* curl = nullptr;
  HttpSessionOptions options;
  ~Impl() {
    if (curl != nullptr) curl_easy_cleanup(curl);
  }
};

HttpSession::HttpSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpSession::~HttpSession() = default;

Result<std::unique_ptr<HttpSession>> HttpSession::Create(HttpSessionOptions options) {
  GlobalInit();
  auto impl = std::make_unique<Impl>();
  impl->curl = curl_easy_init();
  if (impl->curl == nullptr) return Status::Internal("curl_easy_init failed");
  impl->options = std::move(options);
  return std::unique_ptr<HttpSession>(new HttpSession(std::move(impl)));
}

Result<HttpResponse> HttpSession::Perform(const HttpRequest& req) {
  if (interrupted_) return Status::Cancelled("interrupted");
  CURL* c = impl_->curl;
  // Reset clears the options of the previous exchange but keeps the
  // connection cache: that is the connection reuse.
  curl_easy_reset(c);
  Exchange ex;
  ex.curl = c;
  ex.req = &req;
  ex.interrupted = &interrupted_;
  char errbuf[CURL_ERROR_SIZE] = {0};

  curl_easy_setopt(c, CURLOPT_URL, req.url.c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);  // threads: no SIGALRM for DNS timeouts
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);  // redirects are decided above this layer
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(impl_->options.connect_timeout.count()));
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(std::max<int64_t>(1, req.timeout.count())));
  if (req.low_speed_bytes > 0) {
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, static_cast<long>(req.low_speed_bytes));
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, static_cast<long>(req.low_speed_time.count()));
  }
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, impl_->options.insecure_tls ? 0L : 1L);
  curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, impl_->options.insecure_tls ? 0L : 2L);
  if (!impl_->options.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, impl_->options.ca_file.c_str());
  curl_easy_setopt(c, CURLOPT_USERAGENT, impl_->options.user_agent.c_str());
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &ex);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &ex);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, OnProgress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, &ex);

  struct curl_slist* headers = nullptr;
  std::string auth;
  for (const auto& h : req.headers) headers = curl_slist_append(headers, h.c_str());
  headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip
  if (req.bearer != nullptr) {
    auth = "Authorization: Bearer " + *req.bearer;
    headers = curl_slist_append(headers, auth.c_str());
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);

  if (req.method == "POST") {
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, req.body.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
  } else if (req.method == "PUT") {
    curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(c, CURLOPT_READFUNCTION, OnRead);
    curl_easy_setopt(c, CURLOPT_READDATA, &ex);
    curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(req.upload_size));
  } else {
    curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
  }
  if (req.download_fd >= 0) {
    // Bigger reads for bulk bytes: fewer callbacks, writes and hash updates.
    curl_easy_setopt(c, CURLOPT_BUFFERSIZE, 256L * 1024);
    if (::ftruncate(req.download_fd, 0) != 0) {
      curl_slist_free_all(headers);
      return Status::Io("cannot truncate the download file");
    }
    if (req.download_hash != nullptr) req.download_hash->Reset();
  }

  ex.resp.sent_at = std::chrono::steady_clock::now();
  const CURLcode code = curl_easy_perform(c);
  curl_slist_free_all(headers);
  // Drop the header copy holding the token as soon as it is no longer needed.
  std::fill(auth.begin(), auth.end(), '\0');
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, nullptr);
  if (code != CURLE_OK) return TransportError(code, errbuf, ex, req);

  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &ex.resp.status);
  char* location = nullptr;
  if (curl_easy_getinfo(c, CURLINFO_REDIRECT_URL, &location) == CURLE_OK && location != nullptr) {
    ex.resp.redirect_url = location;
  }
  return std::move(ex.resp);
}

}  // namespace scimesh

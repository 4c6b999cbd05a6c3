// HttpExchange: one HTTP exchange on a libcurl easy handle: the options every
// request gets (timeouts, TLS, no redirects, headers, the bearer token), the
// callbacks that collect the answer within its size limits, and libcurl's
// result mapped to a Status. HttpSession drives it with curl_easy_perform;
// HeartbeatHub drives many at once with one multi handle.
//
// Internal to libscimesh_protocol (it exposes libcurl). Not thread-safe: the
// thread that drives the easy handle owns the exchange.
#pragma once

#include <curl/curl.h>

#include <atomic>
#include <string>

#include "protocol/client/http_session.h"

namespace scimesh {

// curl_global_init, once per process (thread-safe).
void CurlGlobalInit();

class HttpExchange {
 public:
  // Configures `curl` (freshly reset by the caller) for `request`. `options`,
  // `request` and `interrupted` (may be null: never interrupted) must outlive
  // the exchange, which must outlive libcurl's use of the handle.
  HttpExchange(CURL* curl, const HttpSessionOptions& options, const HttpRequest& request,
               const std::atomic<bool>* interrupted);
  ~HttpExchange();  // frees the header list and wipes its copy of the token
  HttpExchange(const HttpExchange&) = delete;
  HttpExchange& operator=(const HttpExchange&) = delete;

  // Call just before handing the handle to libcurl: truncates a download
  // file and records sent_at. kIo when the truncation fails.
  Status Prepare();

  // The answer once libcurl finished the transfer with `code`.
  Result<HttpResponse> Finish(CURLcode code);

 private:
  static size_t OnHeader(char* data, size_t size, size_t n, void* user);
  static size_t OnBody(char* data, size_t size, size_t n, void* user);
  static size_t OnRead(char* buffer, size_t size, size_t n, void* user);
  static int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t);
  Status TransportError(CURLcode code) const;

  CURL* curl_;
  const HttpRequest& req_;
  const std::atomic<bool>* interrupted_;
  const Clock& clock_;
  struct curl_slist* headers_ = nullptr;
  std::string auth_;
  char errbuf_[CURL_ERROR_SIZE] = {0};
  HttpResponse resp_;
  int64_t upload_offset_ = 0;
  bool body_too_large_ = false;
  bool download_too_large_ = false;
  int download_errno_ = 0;
  bool upload_read_failed_ = false;
};

}  // namespace scimesh

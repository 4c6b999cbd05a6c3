// HttpSession: one easy handle, reused across exchanges (connection reuse).
#include "protocol/client/http_session.h"

#include <curl/curl.h>

#include <mutex>

#include "protocol/client/http_exchange.h"

namespace scimesh {

void CurlGlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

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
  CurlGlobalInit();
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
  HttpExchange ex(c, impl_->options, req, &interrupted_);
  SCIMESH_RETURN_IF_ERROR(ex.Prepare());
  return ex.Finish(curl_easy_perform(c));
}

}  // namespace scimesh

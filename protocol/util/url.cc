// URL parsing and transport policy, on libcurl's URL API.
#include "protocol/util/url.h"

#include <curl/curl.h>

#include <algorithm>
#include <charconv>
#include <memory>

namespace scimesh {
namespace {

struct UrlDeleter {
  void operator()(CURLU* u) const { curl_url_cleanup(u); }
};
using UrlHandle = std::unique_ptr<CURLU, UrlDeleter>;

std::string Part(CURLU* u, CURLUPart part, unsigned flags = 0) {
  char* out = nullptr;
  if (curl_url_get(u, part, &out, flags) != CURLUE_OK || out == nullptr) return "";
  std::string s(out);
  curl_free(out);
  return s;
}

Result<Url> FromHandle(CURLU* u) {
  Url url;
  url.scheme = Part(u, CURLUPART_SCHEME);
  std::transform(url.scheme.begin(), url.scheme.end(), url.scheme.begin(), ::tolower);
  if (url.scheme != "http" && url.scheme != "https") {
    return Status::InvalidArgument("URL scheme must be http or https, not '" + url.scheme + "'");
  }
  char* user = nullptr;
  if (curl_url_get(u, CURLUPART_USER, &user, 0) == CURLUE_OK) {
    curl_free(user);
    return Status::InvalidArgument("URL must not carry credentials; use SCIMESH_TOKEN_FILE");
  }
  url.host = Part(u, CURLUPART_HOST);
  std::transform(url.host.begin(), url.host.end(), url.host.begin(), ::tolower);
  if (url.host.empty()) return Status::InvalidArgument("URL has no host");
  const std::string port = Part(u, CURLUPART_PORT, CURLU_DEFAULT_PORT);
  if (!port.empty()) {  // libcurl has checked it: digits, at most 65535
    const char* const end = port.data() + port.size();
    if (auto [p, ec] = std::from_chars(port.data(), end, url.port); ec != std::errc() || p != end)
      return Status::InvalidArgument("URL port '" + port + "' is not a port number");
  }
  url.text = Part(u, CURLUPART_URL);
  return url;
}

}  // namespace

Result<Url> ParseUrl(std::string_view text) {
  UrlHandle u(curl_url());
  if (!u) return Status::Internal("out of memory parsing a URL");
  const std::string s(text);
  if (curl_url_set(u.get(), CURLUPART_URL, s.c_str(), 0) != CURLUE_OK) {
    return Status::InvalidArgument("not an absolute http(s) URL");
  }
  return FromHandle(u.get());
}

Result<Url> ResolveUrl(const Url& base, std::string_view location) {
  UrlHandle u(curl_url());
  if (!u) return Status::Internal("out of memory parsing a URL");
  const std::string loc(location);
  if (curl_url_set(u.get(), CURLUPART_URL, base.text.c_str(), 0) != CURLUE_OK ||
      curl_url_set(u.get(), CURLUPART_URL, loc.c_str(), 0) != CURLUE_OK) {
    return Status::InvalidArgument("redirect Location is not a valid URL");
  }
  return FromHandle(u.get());
}

bool IsLoopbackHost(std::string_view host) {
  if (host == "localhost" || host == "[::1]" || host == "::1") return true;
  if (host.substr(0, 4) != "127.") return false;
  // 127.a.b.c with numeric parts only.
  int dots = 0;
  for (char c : host) {
    if (c == '.') ++dots;
    else if (c < '0' || c > '9') return false;
  }
  return dots == 3;
}

bool SameOrigin(const Url& a, const Url& b) {
  return a.scheme == b.scheme && a.host == b.host && a.port == b.port;
}

Status CheckTransportPolicy(const Url& url, bool allow_insecure_http) {
  if (url.scheme == "https") return Status::Ok();
  if (IsLoopbackHost(url.host) || allow_insecure_http) return Status::Ok();
  return Status::PermissionDenied("plain http to " + url.host +
                                  " is refused: use https, or allow insecure http explicitly");
}

std::string EscapeComponent(std::string_view text) {
  char* e = curl_easy_escape(nullptr, text.data(), static_cast<int>(text.size()));
  if (e == nullptr) return "";
  std::string s(e);
  curl_free(e);
  return s;
}

}  // namespace scimesh

// HttpRequest / HttpResponse accessors.
#include "coordinator/http_message.h"

#include <strings.h>

#include <algorithm>
#include <cctype>

namespace scimesh::coordinator {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

}  // namespace

bool HttpRequest::has_header(std::string_view name) const {
  const std::string key = Lower(name);
  return std::any_of(headers_.begin(), headers_.end(), [&](const auto& h) { return h.first == key; });
}

std::string HttpRequest::get_header_value(std::string_view name) const {
  const std::string key = Lower(name);
  for (const auto& [n, v] : headers_) {
    if (n == key) return v;
  }
  return {};
}

std::vector<std::string> HttpRequest::get_header_values(std::string_view name) const {
  const std::string key = Lower(name);
  std::vector<std::string> values;
  for (const auto& [n, v] : headers_) {
    if (n == key) values.push_back(v);
  }
  return values;
}

void HttpRequest::add_header(std::string name, std::string value) {
  headers_.emplace_back(Lower(name), std::move(value));
}

void HttpResponse::set_header(std::string name, std::string value) {
  headers.emplace_back(std::move(name), std::move(value));
}

void HttpResponse::set_content(std::string text, std::string type) {
  body = std::move(text);
  content_type = std::move(type);
}

void HttpResponse::set_content_provider(size_t length, std::string type, ContentProvider produce,
                                        std::function<void(bool)> done) {
  content_length = length;
  content_type = std::move(type);
  provider = std::move(produce);
  release = [done = std::move(done)] {
    if (done) done(true);
  };
}

void HttpResponse::Hold(std::chrono::steady_clock::time_point deadline, Poll again) {
  until = deadline;
  poll = std::move(again);
}

bool HttpResponse::closes() const {
  return std::any_of(headers.begin(), headers.end(), [](const auto& h) {
    return strcasecmp(h.first.c_str(), "Connection") == 0 && strcasecmp(h.second.c_str(), "close") == 0;
  });
}

}  // namespace scimesh::coordinator

// One libcurl easy handle and the single HTTP exchange it performs: no
// retries, no redirects followed, nothing protocol-specific (client.h adds those).
//
// The handle is reused across requests so connections are kept alive. An
// HttpSession is used by ONE thread at a time; only Interrupt() may be called
// from another thread. Errors are values: kUnavailable and kTimeout mean the
// exchange failed in transport and may be retried; every other code may not.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "protocol/util/clock.h"
#include "protocol/util/status.h"

namespace scimesh {

class Sha256;

struct HttpSessionOptions {
  Millis connect_timeout{5000};
  bool insecure_tls = false;  // skip certificate and host verification
  std::string ca_file;        // extra CA bundle; empty: the system's
  std::string user_agent = "libscimesh_protocol";
  const Clock* clock = nullptr;  // reads each request's sent_at (nullptr: SteadyClock())
};

struct HttpRequest {
  std::string method = "GET";  // GET, POST or PUT
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  const std::string* bearer = nullptr;  // sent as "Authorization: Bearer ..." when set
  // Who answers `url`, for transport errors: "cannot reach the coordinator at
  // https://host:8470: <libcurl's reason>" (only the origin is named, never
  // the path or query).
  std::string peer = "the server";
  std::string body;                     // POST body
  Millis timeout{30000};                // whole exchange
  // Abort when slower than low_speed_bytes per second for low_speed_time
  // (0: never; the long-poll claim must not have one).
  int64_t low_speed_bytes = 0;
  std::chrono::seconds low_speed_time{0};
  size_t max_body_bytes = 1 << 20;  // in-memory 2xx body limit; error bodies are cut at 64 KiB

  // PUT: stream `upload_size` bytes of `upload_fd` from offset 0.
  int upload_fd = -1;
  int64_t upload_size = 0;

  // A 2xx body goes to `download_fd` from offset 0 (the file is truncated
  // first, so a retry starts clean), hashed into `download_hash`; more than
  // `download_limit` bytes aborts with kDataLoss.
  int download_fd = -1;
  Sha256* download_hash = nullptr;
  int64_t download_limit = -1;
};

struct HttpResponse {
  long status = 0;
  std::string body;  // non-2xx bodies, and 2xx bodies not sent to a file
  std::map<std::string, std::string> headers;  // names lowercase; the final response's
  std::string redirect_url;                    // resolved Location of a 3xx
  int64_t downloaded = 0;                      // bytes written to download_fd
  MonoTime sent_at;                            // just before the request left

  std::string Header(const std::string& lowercase_name) const {
    auto it = headers.find(lowercase_name);
    return it == headers.end() ? std::string() : it->second;
  }
};

class HttpSession {
 public:
  static Result<std::unique_ptr<HttpSession>> Create(HttpSessionOptions options);
  ~HttpSession();
  HttpSession(const HttpSession&) = delete;
  HttpSession& operator=(const HttpSession&) = delete;

  // One exchange. Never follows redirects. kCancelled if interrupted.
  Result<HttpResponse> Perform(const HttpRequest& request);

  // Aborts the exchange in progress (within about a second: libcurl's
  // progress callback) and every later one until ClearInterrupt(). Thread-safe.
  void Interrupt() { interrupted_ = true; }
  void ClearInterrupt() { interrupted_ = false; }
  bool interrupted() const { return interrupted_; }

 private:
  struct Impl;
  explicit HttpSession(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  std::atomic<bool> interrupted_{false};
};

}  // namespace scimesh

// HttpRequest and HttpResponse: one HTTP exchange as the route handlers see
// it, independent of the server library (coordinator/http_server.h fills the
// request and writes the response). Plain values owned by the front end for
// the life of one request; a handler uses them from one thread at a time.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace scimesh::coordinator {

// Receives a streamed body: each call gets the next bytes; returning false
// stops reading.
using BodyChunk = std::function<bool(const char* data, size_t size)>;

// Pulls a streamed request body (artifact uploads): calls `chunk` until the
// body's end (true) or until `chunk` refuses or the connection is lost (false).
// Thread: the handler's.
using ContentReader = std::function<bool(const BodyChunk& chunk)>;

// Where a content provider writes the next bytes of a streamed response.
class DataSink {
 public:
  virtual ~DataSink() = default;
  virtual bool write(const char* data, size_t size) = 0;
};

struct HttpRequest {
  // The body as the front end received it before the handler ran (JSON
  // routes); a streamed route (upload) reads it through its ContentReader.
  enum class BodyState {
    kComplete,  // `body` holds all of it
    kTooLarge,  // more than the route's limit arrived (and was dropped), the end was read
    kCutOff,    // more than the drain cap was declared or arrived: the rest is left unread
    kNoLength,  // neither Content-Length nor chunked: no body was read
    kStreamed,  // read by the handler through its ContentReader
  };

  std::string method;
  std::string path;  // without the query
  std::vector<std::string> matches;  // [0]: the path, [1..]: the route's captures
  std::multimap<std::string, std::string> params;  // query arguments
  std::string remote_addr;
  int remote_port = 0;
  std::string body;
  BodyState body_state = BodyState::kComplete;

  bool has_header(std::string_view name) const;
  // The first value of header `name` (case-insensitive), or "".
  std::string get_header_value(std::string_view name) const;
  // Every value of header `name` (case-insensitive), in arrival order.
  std::vector<std::string> get_header_values(std::string_view name) const;
  void add_header(std::string name, std::string value);

 private:
  std::vector<std::pair<std::string, std::string>> headers_;  // names lowercased
};

// Produces `length` bytes of a streamed response from `offset`.
using ContentProvider = std::function<bool(size_t offset, size_t length, DataSink& sink)>;

struct HttpResponse {
  // Asked again by the front end while a claim is held: true once it has
  // answered `res`, false to keep holding. `shutting_down`: answer now.
  using Poll = std::function<bool(HttpResponse& res, bool shutting_down)>;

  int status = 0;  // 0: no handler answered
  std::string body;
  std::string content_type;
  std::vector<std::pair<std::string, std::string>> headers;
  // A streamed body of `content_length` bytes (downloads); `release` runs
  // once when the response is done with.
  ContentProvider provider;
  size_t content_length = 0;
  std::function<void()> release;
  // A long poll to hold without a thread until `poll` answers or `until`.
  Poll poll;
  std::chrono::steady_clock::time_point until;

  void set_header(std::string name, std::string value);
  void set_content(std::string text, std::string type);
  void set_content_provider(size_t length, std::string type, ContentProvider produce,
                            std::function<void(bool)> done);
  // Holds the request: the front end calls `again` whenever work may have
  // become available (and at least twice a second) until it answers.
  void Hold(std::chrono::steady_clock::time_point deadline, Poll again);
  bool closes() const;  // the reply carries Connection: close
};

}  // namespace scimesh::coordinator

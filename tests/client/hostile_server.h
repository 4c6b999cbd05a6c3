// HostileServer: a loopback HTTP/1.1 server on raw sockets whose every answer
// a test scripts: a normal response, or none (drop after reading, so the
// call may have been applied), a TCP reset, a stall, or raw bytes.
//
// Every request is recorded before the handler runs. The handler runs on the
// connection's thread, so it must be thread-safe. All public members are
// thread-safe. Test-only code.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace scimesh::testing {

using Millis = std::chrono::milliseconds;

struct RecordedRequest {
  std::string method;
  std::string target;  // path + query
  std::string path;
  std::string query;
  std::map<std::string, std::string> headers;  // names lowercase
  std::string body;
  std::chrono::steady_clock::time_point at;
  int connection = 0;  // which accepted connection carried it

  std::string Header(const std::string& lowercase_name) const {
    auto it = headers.find(lowercase_name);
    return it == headers.end() ? std::string() : it->second;
  }
  bool HasHeader(const std::string& lowercase_name) const { return headers.count(lowercase_name) > 0; }
};

struct Reply {
  enum class Kind { kRespond, kDrop, kReset, kStall, kRaw };
  Kind kind = Kind::kRespond;
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  Millis stall{0};          // kStall: silence for this long, then close; kRaw: after the bytes
  bool close_after = false;  // close the connection after answering

  static Reply Json(int status, std::string body, std::vector<std::pair<std::string, std::string>> headers = {});
  static Reply Bytes(int status, std::string body, std::string content_type);
  static Reply Redirect(int status, std::string location);
  static Reply Drop();               // read the request, answer nothing, close
  static Reply Reset();              // read the request, then a TCP RST
  static Reply Stall(Millis for_how_long);
  static Reply Raw(std::string bytes, Millis stall_after);  // exactly these bytes, then silence
};

class HostileServer {
 public:
  using Handler = std::function<Reply(const RecordedRequest&)>;

  // Listens on `address`:0 (any 127.x.y.z works on Linux loopback).
  static std::unique_ptr<HostileServer> Start(Handler handler, const std::string& address = "127.0.0.1");
  ~HostileServer();  // closes everything, wakes stalls, joins threads

  int port() const { return port_; }
  const std::string& address() const { return address_; }
  std::string url() const { return "http://" + address_ + ":" + std::to_string(port_); }

  void SetHandler(Handler handler);
  std::vector<RecordedRequest> requests() const;
  size_t Count(const std::function<bool(const RecordedRequest&)>& pred) const;
  // Waits until `pred` holds for some recorded request; false on timeout.
  bool WaitFor(const std::function<bool(const RecordedRequest&)>& pred, Millis timeout) const;
  // Waits until at least `n` requests were recorded; false on timeout.
  bool WaitForCount(size_t n, Millis timeout) const;

 private:
  HostileServer() = default;
  void AcceptLoop();
  void Serve(int fd, int connection);
  bool SleepUnlessStopping(Millis d);

  std::string address_;
  int port_ = 0;
  int listen_fd_ = -1;
  int wake_pipe_[2] = {-1, -1};

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool stopping_ = false;
  Handler handler_;
  std::vector<RecordedRequest> requests_;
  std::vector<int> open_fds_;
  std::vector<std::thread> threads_;
  std::thread acceptor_;
  int connections_ = 0;
};

// Matches requests by method and a path suffix ("/complete").
std::function<bool(const RecordedRequest&)> Call(std::string method, std::string path_suffix);

}  // namespace scimesh::testing

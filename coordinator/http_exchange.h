// HttpServer internals: one request's state across the connection thread and
// a handler thread, and the libmicrohttpd callbacks that drive it. Included
// by http_server.cc and http_exchange.cc only.
#pragma once

#include <microhttpd.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "coordinator/api_error.h"
#include "coordinator/body_channel.h"
#include "coordinator/http_server.h"

namespace scimesh::coordinator {

// The drain cap: a body larger than this (declared or arriving) is not read
// to its end; the connection is closed instead.
inline constexpr uint64_t kDrainCap = 16u << 20;

struct HttpServer::Exchange {
  HttpServer* server = nullptr;
  MHD_Connection* conn = nullptr;
  HttpRequest req;
  Lane lane = Lane::kFirst;
  std::string route;  // the matched pattern, for the log and metrics
  const Handler* handler = nullptr;
  uint64_t seen = 0;  // body bytes received
  std::unique_ptr<BodyChannel> channel;  // streamed routes
  int status = 0;     // what was answered

  std::mutex mu;  // guards the members below; never held across an MHD call
  bool answered = false;
  bool suspended = false;
  bool gone = false;  // the request completed: never resume
  HttpResponse res;

  // Another thread: resumes the connection if it is suspended.
  void Resume();
  // Connection thread, inside the access handler.
  void Suspend();
};

// The libmicrohttpd callbacks (cls: the HttpServer).
struct ServerCallbacks {
  static MHD_Result Access(void* cls, MHD_Connection* conn, const char* url, const char* method,
                           const char* version, const char* upload_data, size_t* upload_data_size,
                           void** con_cls);
  static void Completed(void* cls, MHD_Connection* conn, void** con_cls, MHD_RequestTerminationCode toe);
  static void Connection(void* cls, MHD_Connection* conn, void** socket_context, MHD_ConnectionNotificationCode toe);
  static MHD_Result Accept(void* cls, const struct sockaddr* addr, socklen_t addrlen);
  static void Log(void* cls, const char* fmt, va_list ap);

 private:
  static MHD_Result Begin(HttpServer& server, MHD_Connection* conn, const char* url, const char* method,
                          void** con_cls);
  // The front end's refusal of a request before any route (the server
  // stopping, the cap on connections with a key, ambiguous framing); the
  // connection is then closed.
  static std::optional<ApiError> Admit(HttpServer& server, MHD_Connection* conn, const HttpRequest& req);
  // Routed: how the body will be read (buffered, streamed to an upload
  // thread, or refused at once).
  static MHD_Result StartBody(HttpServer& server, const std::shared_ptr<HttpServer::Exchange>& ex);
  static MHD_Result Receive(HttpServer::Exchange& ex, const char* data, size_t* size);
  static MHD_Result Finish(HttpServer& server, const std::shared_ptr<HttpServer::Exchange>& ex);
};

// Queues `res` on `conn` (inside the access handler). MHD_NO on failure.
MHD_Result QueueResponse(MHD_Connection* conn, HttpResponse& res);
// "1.2.3.4" or "::1" for a socket address; "" when unknown.
std::string AddressText(const struct sockaddr* addr);

}  // namespace scimesh::coordinator

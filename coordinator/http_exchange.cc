// HttpServer: the libmicrohttpd callbacks — a request's head, body and end on
// the connection thread, front-end refusals, and writing the answer.
#include "coordinator/http_exchange.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <strings.h>

#include <cstdio>
#include <cstring>

#include <spdlog/spdlog.h>

#include "coordinator/api_error.h"
#include "coordinator/responses.h"

namespace scimesh::coordinator {
namespace {

using Exchange = HttpServer::Exchange;
using ExchangeSlot = std::shared_ptr<Exchange>;

// What a connection carries from its opening to every request on it.
// Touched only on the server's connection thread.
struct ConnectionState {
  bool authenticated = false;
};

class BufferSink : public DataSink {
 public:
  BufferSink(char* buf, size_t max) : buf_(buf), max_(max) {}
  bool write(const char* data, size_t size) override {
    if (size > max_ - used_) return false;
    std::memcpy(buf_ + used_, data, size);
    used_ += size;
    return true;
  }
  size_t used() const { return used_; }

 private:
  char* buf_;
  size_t max_;
  size_t used_ = 0;
};

struct StreamedBody {
  ContentProvider provider;
  std::function<void()> release;
  size_t length;
};

ssize_t ProduceBody(void* cls, uint64_t pos, char* buf, size_t max) {
  auto* body = static_cast<StreamedBody*>(cls);
  if (pos >= body->length) return MHD_CONTENT_READER_END_OF_STREAM;
  BufferSink sink(buf, max);
  const size_t want = std::min<uint64_t>(max, body->length - pos);
  if (!body->provider(static_cast<size_t>(pos), want, sink) || sink.used() == 0) {
    return MHD_CONTENT_READER_END_WITH_ERROR;
  }
  return static_cast<ssize_t>(sink.used());
}

void ReleaseBody(void* cls) {
  auto* body = static_cast<StreamedBody*>(cls);
  if (body->release) body->release();
  delete body;
}

HttpResponse Refusal(const ApiError& e, bool close) {
  HttpResponse res;
  res.status = e.http_status;
  if (e.retry_after_s > 0) res.set_header("Retry-After", std::to_string(e.retry_after_s));
  if (close) res.set_header("Connection", "close");
  res.set_content(ToJson(e), "application/json");
  return res;
}

MHD_Result CollectHeader(void* cls, MHD_ValueKind, const char* key, const char* value) {
  static_cast<HttpRequest*>(cls)->add_header(key, value == nullptr ? "" : value);
  return MHD_YES;
}

MHD_Result CollectArgument(void* cls, MHD_ValueKind, const char* key, const char* value) {
  static_cast<HttpRequest*>(cls)->params.emplace(key, value == nullptr ? "" : value);
  return MHD_YES;
}

// Why the body's framing is ambiguous, or "" when it is not: both
// Content-Length and Transfer-Encoding, or Content-Lengths that disagree. A
// proxy in front may read such a body differently, and the bytes one side
// takes for a body the other serves as a second request (smuggling).
std::string AmbiguousFraming(const HttpRequest& req) {
  const std::vector<std::string> lengths = req.get_header_values("Content-Length");
  if (!lengths.empty() && req.has_header("Transfer-Encoding")) {
    return "both Content-Length and Transfer-Encoding: the body's end is ambiguous";
  }
  for (const std::string& l : lengths) {
    if (l != lengths.front()) return "Content-Length given twice with different values";
  }
  return {};
}

bool HasBodyFraming(const HttpRequest& req) {
  if (req.has_header("Content-Length")) return true;
  return strcasestr(req.get_header_value("Transfer-Encoding").c_str(), "chunked") != nullptr;
}

// The declared Content-Length, or -1 when there is none. libmicrohttpd has
// already refused one that is not a number (negative included) with 400.
int64_t DeclaredLength(const HttpRequest& req) {
  const std::string v = req.get_header_value("Content-Length");
  if (v.empty()) return -1;
  if (v.size() > 18) return INT64_MAX;
  return std::strtoll(v.c_str(), nullptr, 10);
}

// The request line and headers: method, path, headers, query arguments and
// the client's address.
void ReadHead(MHD_Connection* conn, const char* url, const char* method, HttpRequest& req) {
  req.method = method;
  req.path = url;
  MHD_get_connection_values(conn, MHD_HEADER_KIND, &CollectHeader, &req);
  MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, &CollectArgument, &req);
  const auto* info = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  if (info == nullptr) return;
  req.remote_addr = AddressText(info->client_addr);
  if (info->client_addr != nullptr && info->client_addr->sa_family == AF_INET) {
    req.remote_port = ntohs(reinterpret_cast<const sockaddr_in*>(info->client_addr)->sin_port);
  } else if (info->client_addr != nullptr && info->client_addr->sa_family == AF_INET6) {
    req.remote_port = ntohs(reinterpret_cast<const sockaddr_in6*>(info->client_addr)->sin6_port);
  }
}

// Answers the exchange's request with `e` at once, from the connection thread
// (closing the connection when `close`).
MHD_Result RefuseNow(Exchange& ex, const ApiError& e, bool close) {
  std::lock_guard<std::mutex> lock(ex.mu);
  ex.res = Refusal(e, close);
  ex.answered = true;
  ex.status = ex.res.status;
  return QueueResponse(ex.conn, ex.res);
}

}  // namespace

std::string AddressText(const struct sockaddr* addr) {
  char text[INET6_ADDRSTRLEN] = "";
  if (addr == nullptr) return {};
  if (addr->sa_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(addr)->sin_addr, text, sizeof text);
  } else if (addr->sa_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr, text, sizeof text);
  }
  return text;
}

MHD_Result QueueResponse(MHD_Connection* conn, HttpResponse& res) {
  MHD_Response* r = nullptr;
  if (res.provider) {
    auto* body = new StreamedBody{std::move(res.provider), std::move(res.release), res.content_length};
    r = MHD_create_response_from_callback(res.content_length, 64 * 1024, &ProduceBody, body, &ReleaseBody);
    if (r == nullptr) ReleaseBody(body);
  } else {
    r = MHD_create_response_from_buffer(res.body.size(), res.body.data(), MHD_RESPMEM_MUST_COPY);
  }
  if (r == nullptr) return MHD_NO;
  if (!res.content_type.empty()) MHD_add_response_header(r, "Content-Type", res.content_type.c_str());
  for (const auto& [name, value] : res.headers) MHD_add_response_header(r, name.c_str(), value.c_str());
  const MHD_Result queued = MHD_queue_response(conn, static_cast<unsigned>(res.status), r);
  MHD_destroy_response(r);
  return queued;
}

void Exchange::Resume() {
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!suspended || gone) return;
    suspended = false;
  }
  MHD_resume_connection(conn);
}

void Exchange::Suspend() {
  // Suspended before the flag is set, and the flag set before any thread can
  // want to resume (the handler is dispatched after this returns).
  MHD_suspend_connection(conn);
  std::lock_guard<std::mutex> lock(mu);
  suspended = true;
}

MHD_Result ServerCallbacks::Access(void* cls, MHD_Connection* conn, const char* url, const char* method,
                                   const char*, const char* upload_data, size_t* upload_data_size,
                                   void** con_cls) {
  auto& server = *static_cast<HttpServer*>(cls);
  if (*con_cls == nullptr) return Begin(server, conn, url, method, con_cls);
  const ExchangeSlot& ex = *static_cast<ExchangeSlot*>(*con_cls);
  if (*upload_data_size > 0) return Receive(*ex, upload_data, upload_data_size);
  return Finish(server, ex);
}

MHD_Result ServerCallbacks::Begin(HttpServer& server, MHD_Connection* conn, const char* url, const char* method,
                                  void** con_cls) {
  auto ex = std::make_shared<Exchange>();
  ex->server = &server;
  ex->conn = conn;
  *con_cls = new ExchangeSlot(ex);
  ++server.in_flight_;
  server.limits_.HeadArrived(conn);
  ReadHead(conn, url, method, ex->req);
  if (auto refusal = Admit(server, conn, ex->req)) {
    ex->route = "refused";
    return RefuseNow(*ex, *refusal, true);
  }
  const auto* route = server.Match(ex->req);
  if (route == nullptr) {
    ex->route = "unknown";
    return RefuseNow(*ex, ApiError::NotFound("no such endpoint"), HasBodyFraming(ex->req));
  }
  ex->route = route->pattern;
  ex->lane = route->lane;
  ex->handler = &route->handler;
  return StartBody(server, ex);
}

std::optional<ApiError> ServerCallbacks::Admit(HttpServer& server, MHD_Connection* conn, const HttpRequest& req) {
  // A request on a kept-alive connection while the server stops (a worker
  // claiming again the moment its held claim was answered): answered here,
  // never suspended. Ordered after the in_flight_ count, so Stop() either
  // waits for this request or sees it refused.
  if (server.stopping_.load()) {
    ApiError closing = ApiError::Unavailable("the coordinator is shutting down; retry later");
    closing.retry_after_s = server.limits_.caps().retry_after_s;
    return closing;
  }
  const auto* socket = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  auto* state = socket == nullptr ? nullptr : static_cast<ConnectionState*>(socket->socket_context);
  if (state != nullptr && !state->authenticated && server.known_key_ && server.known_key_(req)) {
    if (!server.limits_.Authenticated(conn)) {
      ApiError busy = ApiError::Unavailable("too many connections; retry later");
      busy.retry_after_s = server.limits_.caps().retry_after_s;
      return busy;
    }
    state->authenticated = true;
  }
  if (const std::string why = AmbiguousFraming(req); !why.empty()) return ApiError::BadRequest("", why);
  return std::nullopt;
}

MHD_Result ServerCallbacks::StartBody(HttpServer& server, const std::shared_ptr<Exchange>& ex) {
  HttpRequest& req = ex->req;
  const bool sends_body = req.method == "POST" || req.method == "PUT";
  if (sends_body && !HasBodyFraming(req)) {
    // Reading would wait for the client to close: answer now.
    return RefuseNow(*ex, ApiError::LengthRequired(), true);
  }
  if (ex->lane == HttpServer::Lane::kStreamed) {
    req.body_state = HttpRequest::BodyState::kStreamed;
    std::weak_ptr<Exchange> weak = ex;
    ex->channel = std::make_unique<BodyChannel>([weak] {
      if (auto e = weak.lock()) e->Resume();
    });
    server.uploads_.Push(WorkQueue::Lane::kFirst, [&server, ex] { server.RunHandler(ex); });
    return MHD_YES;
  }
  if (DeclaredLength(req) > static_cast<int64_t>(kDrainCap)) {
    req.body_state = HttpRequest::BodyState::kCutOff;
    return RefuseNow(
        *ex, ApiError::TooLarge("the body is larger than " + std::to_string(server.options_.max_body) + " bytes"),
        true);
  }
  return MHD_YES;
}

MHD_Result ServerCallbacks::Receive(Exchange& ex, const char* data, size_t* size) {
  const size_t n = *size;
  *size = 0;
  ex.seen += n;
  ex.server->limits_.BodyArrived(ex.conn, n);
  if (ex.channel) {
    if (!ex.channel->Offer(data, n)) {
      ex.Suspend();
      ex.channel->MarkPaused();
    }
    // A refused upload's rest is dropped up to the drain cap, then cut off.
    std::lock_guard<std::mutex> lock(ex.mu);
    return ex.seen > kDrainCap && ex.answered ? MHD_NO : MHD_YES;
  }
  HttpRequest& req = ex.req;
  bool answered = false;
  {
    std::lock_guard<std::mutex> lock(ex.mu);
    answered = ex.answered;
  }
  if (req.body_state == HttpRequest::BodyState::kCutOff || answered) {
    // Too large to drain, or answered already (404): a refusal is queued at
    // the end; close if the client keeps sending past the cap.
    return ex.seen > kDrainCap ? MHD_NO : MHD_YES;
  }
  if (ex.seen > kDrainCap) return MHD_NO;
  if (req.body_state == HttpRequest::BodyState::kTooLarge) return MHD_YES;  // drained, dropped
  if (req.body.size() + n <= ex.server->options_.max_body) {
    req.body.append(data, n);
  } else {
    req.body.clear();
    req.body.shrink_to_fit();
    req.body_state = HttpRequest::BodyState::kTooLarge;
  }
  return MHD_YES;
}

MHD_Result ServerCallbacks::Finish(HttpServer& server, const std::shared_ptr<Exchange>& ex) {
  {
    std::unique_lock<std::mutex> lock(ex->mu);
    if (ex->answered) {
      ex->status = ex->res.status;
      return QueueResponse(ex->conn, ex->res);
    }
  }
  server.limits_.Exempt(ex->conn);
  if (ex->channel) {
    ex->channel->Finish(true);
    ex->Suspend();
    // The handler may have answered before the suspension took hold.
    bool answered = false;
    {
      std::lock_guard<std::mutex> lock(ex->mu);
      answered = ex->answered;
    }
    if (answered) ex->Resume();
    return MHD_YES;
  }
  if (ex->lane == HttpServer::Lane::kInline) {
    server.RunHandler(ex);
    std::lock_guard<std::mutex> lock(ex->mu);
    ex->status = ex->res.status;
    return QueueResponse(ex->conn, ex->res);
  }
  ex->Suspend();
  const auto lane = ex->lane == HttpServer::Lane::kClaims ? WorkQueue::Lane::kClaims : WorkQueue::Lane::kFirst;
  server.queue_.Push(lane, [&server, ex] { server.RunHandler(ex); });
  return MHD_YES;
}

void ServerCallbacks::Completed(void* cls, MHD_Connection* conn, void** con_cls, MHD_RequestTerminationCode) {
  auto& server = *static_cast<HttpServer*>(cls);
  auto* slot = static_cast<ExchangeSlot*>(*con_cls);
  if (slot == nullptr) return;
  *con_cls = nullptr;
  const ExchangeSlot ex = *slot;
  delete slot;
  {
    std::lock_guard<std::mutex> lock(ex->mu);
    ex->gone = true;
  }
  if (ex->channel) ex->channel->Finish(false);
  if (server.observer_ && ex->status != 0) server.observer_(ex->req, ex->status, ex->route);
  server.limits_.RequestDone(conn);
  --server.in_flight_;
}

void ServerCallbacks::Connection(void* cls, MHD_Connection* conn, void** socket_context,
                                 MHD_ConnectionNotificationCode toe) {
  auto& server = *static_cast<HttpServer*>(cls);
  if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
    const auto* fd = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    const auto* addr = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    server.limits_.Opened(conn, fd == nullptr ? -1 : fd->connect_fd,
                          addr == nullptr ? "" : AddressText(addr->client_addr));
    *socket_context = new ConnectionState;
  } else {
    server.limits_.Closed(conn);
    delete static_cast<ConnectionState*>(*socket_context);
    *socket_context = nullptr;
  }
}

MHD_Result ServerCallbacks::Accept(void* cls, const struct sockaddr*, socklen_t) {
  auto& server = *static_cast<HttpServer*>(cls);
  return server.limits_.Acceptable() ? MHD_YES : MHD_NO;
}

void ServerCallbacks::Log(void*, const char* fmt, va_list ap) {
  char line[512];
  std::vsnprintf(line, sizeof line, fmt, ap);
  size_t n = std::strlen(line);
  while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
  spdlog::debug("http: {}", line);
}

}  // namespace scimesh::coordinator

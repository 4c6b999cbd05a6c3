// Integration: malformed and hostile input — every refusal a 400/413 with a
// clear body, never a crash, never a partial write.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "coordinator_fixture.h"

namespace scimesh::coordinator::testing {
namespace {

using BadInput = CoordinatorTest;

void ExpectBadRequest(const Reply& r, const std::string& field) {
  EXPECT_EQ(r.status, 400) << r.Describe();
  EXPECT_EQ(r.Str("error"), "bad_request") << r.Describe();
  EXPECT_EQ(r.Str("field"), field) << r.Describe();
  EXPECT_FALSE(r.Str("message").empty());
}

// Sends `request` as raw bytes (no HTTP library adds a Content-Length) and
// returns what comes back until the connection closes or 5 s pass without a
// byte (a server waiting for the body's end answers nothing in that time).
std::string SendRaw(int port, const std::string& request) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "socket failed";
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string reply;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      send(fd, request.data(), request.size(), 0) == static_cast<ssize_t>(request.size())) {
    char buf[4096];
    for (ssize_t n; (n = recv(fd, buf, sizeof buf, 0)) > 0;) reply.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return reply;
}

TEST_F(BadInput, APostWithoutContentLengthIs411AtOnce) {
  // `curl -X POST` without -d: the body's end is unknowable, so the
  // coordinator must answer now instead of holding a thread until timeout.
  for (const char* path : {"/v1/api/runs/r_0000000000000000/cancel", "/v1/api/steps/claim",
                           "/v1/api/steps/l_0000000000000000/artifacts/a.txt"}) {
    const bool put = std::string(path).find("artifacts") != std::string::npos;
    std::string reply = SendRaw(process_->port(), std::string(put ? "PUT " : "POST ") + path +
                                                      " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAuthorization: Bearer " +
                                                      process_->token(std::string(path).find("/runs/") != std::string::npos ? "exec" : "w1") + "\r\n\r\n");
    EXPECT_EQ(reply.rfind("HTTP/1.1 411", 0), 0u) << path << ": " << reply;
    EXPECT_NE(reply.find("\"error\":\"length_required\""), std::string::npos) << path << ": " << reply;
  }
  EXPECT_EQ(exec_->Get("/v1/api/health").status, 200);
}

// Attack: request smuggling. A body framed two ways (Content-Length and
// chunked, or two Content-Lengths) is read one way by a proxy and another by
// the server; what one takes for body the other serves as a second request.
// The coordinator refuses the framing (400) and closes: the smuggled request
// is never served.
TEST_F(BadInput, AmbiguousFramingIs400AndNothingAfterItIsServed) {
  const std::string token = process_->token("exec");
  const std::string smuggled = "GET /v1/api/health HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::string head = "POST /v1/api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + token + "\r\n";
  for (const std::string& request :
       {head + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled,
        head + "Transfer-Encoding: chunked\r\nContent-Length: 40\r\n\r\n0\r\n\r\n" + smuggled,
        head + "Content-Length: 2\r\nContent-Length: 40\r\n\r\n{}" + smuggled}) {
    const std::string reply = SendRaw(process_->port(), request);
    EXPECT_EQ(reply.rfind("HTTP/1.1 400", 0), 0u) << reply;
    EXPECT_NE(reply.find("\"error\":\"bad_request\""), std::string::npos) << reply;
    size_t responses = 0;
    for (size_t at = reply.find("HTTP/1.1 "); at != std::string::npos; at = reply.find("HTTP/1.1 ", at + 1)) ++responses;
    EXPECT_EQ(responses, 1u) << "a second request was served: " << reply;
  }
  EXPECT_EQ(exec_->Get("/v1/api/health").status, 200);
}

TEST_F(BadInput, MalformedJsonIs400) {
  ExpectBadRequest(w1_->Post("/v1/api/steps/claim", "{\"worker_id\":"), "");
  ExpectBadRequest(w1_->Post("/v1/api/steps/claim", "not json"), "");
  ExpectBadRequest(w1_->Post("/v1/api/steps/claim", "{} {}"), "");
  ExpectBadRequest(w1_->Post("/v1/api/steps/claim", ""), "");
  ExpectBadRequest(w1_->Post("/v1/api/steps/claim", "[1,2]"), "");
  ExpectBadRequest(w1_->Post("/v1/api/steps/claim", "{\"worker_id\":\"\xff\"}"), "");
}

TEST_F(BadInput, WrongTypesAndRangesNameTheField) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep()));
  ExpectBadRequest(w1_->Post("/v1/api/steps/claim", R"({"worker_id":"worker-1","max":"2"})"), "max");
  ExpectBadRequest(w1_->Post("/v1/api/steps/claim", R"({"worker_id":"worker-1","max":65})"), "max");
  ExpectBadRequest(w1_->Post("/v1/api/steps/claim", R"({"worker_id":"worker-1","max":1,"wait_ms":60001})"),
                   "wait_ms");
  ExpectBadRequest(w1_->Post("/v1/api/steps/claim", R"({"worker_id":42,"max":1})"), "worker_id");
  ExpectBadRequest(w1_->Post("/v1/api/steps/l_0000000000000000/fail",
                             R"({"worker_id":"worker-1","attempt":1,"error":{"class":"gremlins","message":"x"}})"),
                   "error.class");
  ExpectBadRequest(w1_->Post("/v1/api/steps/l_0000000000000000/complete", R"({"worker_id":"worker-1","attempt":1})"),
                   "output");
  ExpectBadRequest(exec_->StartRun("wf", "[]"), "input");
}

TEST_F(BadInput, OversizedBodyIs413) {
  std::string big = R"({"worker_id":"worker-1","max":1,"pad":")" + std::string(std::size_t{1100} * 1024, 'x') + "\"}";
  Reply r = w1_->Post("/v1/api/steps/claim", big);
  EXPECT_EQ(r.status, 413) << r.Describe();
  EXPECT_EQ(r.Str("error"), "too_large");
  // The coordinator is still there and answers the next call.
  ApiClient fresh(process_->port(), process_->token("w1"));
  EXPECT_EQ(fresh.Get("/v1/api/health").status, 200);
}

TEST_F(BadInput, TooDeepOrTooLongStringsAre400) {
  std::string deep = R"({"worker_id":"worker-1","max":1,"x":)" + std::string(100, '[') + std::string(100, ']') + "}";
  Reply r = w1_->Post("/v1/api/steps/claim", deep);
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.Str("message").find("deeper"), std::string::npos) << r.Describe();
  std::string long_string =
      R"({"worker_id":"worker-1","max":1,"x":")" + std::string(std::size_t{65} * 1024, 's') + "\"}";
  EXPECT_EQ(w1_->Post("/v1/api/steps/claim", long_string).status, 400);
}

TEST_F(BadInput, UnknownLeaseRunAndEndpointAre404) {
  EXPECT_EQ(w1_->Started("l_0123456789abcdef", "worker-1", 1).status, 404);
  EXPECT_EQ(w1_->Put("/v1/api/steps/l_0123456789abcdef/artifacts/a.txt?worker_id=worker-1&attempt=1", "abc",
                     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
                .status,
            404);
  Reply run = exec_->ShowRun("r_0123456789abcdef");
  EXPECT_EQ(run.status, 404);
  EXPECT_EQ(run.Str("error"), "not_found");
  EXPECT_EQ(exec_->CancelRun("r_0123456789abcdef").status, 404);
  EXPECT_EQ(exec_->Journal("nonsense").status, 404);
  Reply nowhere = exec_->Get("/v1/api/nowhere");
  EXPECT_EQ(nowhere.status, 404);
  EXPECT_EQ(nowhere.Str("error"), "not_found");
  EXPECT_EQ(exec_->StartRun("never-registered").status, 404);
}

TEST_F(BadInput, RegisterRefusesCyclesUnknownNeedsAndChangedDefinitions) {
  ExpectBadRequest(w1_->Register("worker-1", Definitions("wf", R"([{"id":"a","needs":["b"]},{"id":"b","needs":["a"]}])")),
                   "definitions[0].steps[0].needs");
  ExpectBadRequest(w1_->Register("worker-1", Definitions("wf", R"([{"id":"a"},{"id":"b","needs":["zz"]}])")),
                   "definitions[0].steps[1].needs");
  ExpectBadRequest(w1_->Register("worker-1", Definitions("wf", R"([{"id":"a","input":"{{env.HOME}}"}])")),
                   "definitions[0].steps[0].input");
  // Nothing of a refused registration was kept: the worker is unknown.
  ExpectBadRequest(w1_->Claim("worker-1", 1, 0), "worker_id");

  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep(R"("walltime_s":60)")));
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep(R"("walltime_s":60)")));  // same content: fine
  ExpectBadRequest(w1_->Register("worker-1", Definitions("wf", OneStep(R"("walltime_s":61)"))), "definitions[0]");
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep(R"("walltime_s":61)"), "2"));  // a new version
}

TEST_F(BadInput, RefusedCompleteRecordsNothing) {
  RegisterOrDie(*w1_, "worker-1", Definitions("wf", OneStep()));
  std::string run = StartRunOrEmpty("wf");
  LeaseRef l = ClaimOne(*w1_, "worker-1");
  ExpectBadRequest(w1_->Complete(l.lease_id, "worker-1", 1, "{}",
                                 R"(,"artifacts":[{"name":"x","uri":"file:///tmp/x","sha256":")" + std::string(64, 'a') +
                                     R"(","size":1,"media_type":"text/plain"}])"),
                   "artifacts[0]");
  EXPECT_EQ(AttemptStatus(run, "s", 1), "leased");
  EXPECT_EQ(CountEvents(run, "attempt_completed"), 0);
  EXPECT_EQ(w1_->Complete(l.lease_id, "worker-1", 1).status, 200);
}

}  // namespace
}  // namespace scimesh::coordinator::testing

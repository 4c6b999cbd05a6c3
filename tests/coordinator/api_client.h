// ApiClient: HTTP calls to a coordinator on 127.0.0.1 with one key, and the
// protocol's calls as one-liners for tests. One client per thread (it holds
// one keep-alive connection); not thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <rapidjson/document.h>

namespace httplib {
class Client;
}

namespace scimesh::coordinator::testing {

struct Reply {
  int status = 0;  // 0: no HTTP response at all
  std::string body;
  std::string sha256_header;  // X-Scimesh-Sha256
  std::string retry_after;
  std::shared_ptr<rapidjson::Document> json;  // parsed body (empty object when not JSON)

  const rapidjson::Value& operator[](const char* name) const;
  std::string Str(const char* name) const;  // a string member, or ""
  // For failures: "409 fenced: ..." etc.
  std::string Describe() const;
};

class ApiClient {
 public:
  ApiClient(int port, std::string token);
  ~ApiClient();
  ApiClient(const ApiClient&) = delete;
  ApiClient& operator=(const ApiClient&) = delete;

  Reply Get(const std::string& path);
  Reply Post(const std::string& path, const std::string& body);
  Reply Put(const std::string& path, const std::string& body, const std::string& sha256,
            const std::string& content_type = "application/octet-stream");
  // A request with extra headers (Authorization replaced when given).
  Reply Raw(const std::string& method, const std::string& path, const std::string& body,
            const std::vector<std::pair<std::string, std::string>>& headers);

  // Protocol helpers. Bodies are built from the arguments as JSON.
  Reply Register(const std::string& worker_id, const std::string& definitions_json);
  Reply Claim(const std::string& worker_id, int max, int wait_ms, const std::string& extra_members = "");
  Reply Started(const std::string& lease, const std::string& worker_id, int64_t attempt);
  Reply Heartbeat(const std::string& lease, const std::string& worker_id, int64_t attempt);
  Reply Complete(const std::string& lease, const std::string& worker_id, int64_t attempt,
                 const std::string& output_json = "{}", const std::string& extra_members = "");
  Reply Fail(const std::string& lease, const std::string& worker_id, int64_t attempt, const std::string& cls,
             const std::string& message = "failed");
  Reply StartRun(const std::string& workflow, const std::string& input_json = "{}",
                 const std::string& extra_members = "");
  Reply ShowRun(const std::string& run_id);
  Reply Journal(const std::string& run_id);
  Reply CancelRun(const std::string& run_id);

 private:
  Reply Finish(void* result);
  std::unique_ptr<httplib::Client> cli_;
  std::string token_;
};

// A JSON string literal of `s` (quotes and escapes).
std::string Quote(const std::string& s);

}  // namespace scimesh::coordinator::testing

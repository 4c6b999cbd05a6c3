// The test HTTP client over cpp-httplib.
#include "api_client.h"

#include <httplib.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace scimesh::coordinator::testing {

const rapidjson::Value& Reply::operator[](const char* name) const {
  static const rapidjson::Value kNull;
  if (!json || !json->IsObject()) return kNull;
  const rapidjson::Value& object = *json;  // const iterators: comparable without C++20 ambiguity
  auto it = object.FindMember(name);
  return it == object.MemberEnd() ? kNull : it->value;
}

std::string Reply::Str(const char* name) const {
  const rapidjson::Value& v = (*this)[name];
  return v.IsString() ? v.GetString() : "";
}

std::string Reply::Describe() const { return std::to_string(status) + " " + body; }

std::string Quote(const std::string& s) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
  return buf.GetString();
}

ApiClient::ApiClient(int port, std::string token)
    : cli_(std::make_unique<httplib::Client>("127.0.0.1", port)), token_(std::move(token)) {
  cli_->set_connection_timeout(std::chrono::seconds(5));
  cli_->set_read_timeout(std::chrono::seconds(60));
  cli_->set_keep_alive(true);
  cli_->set_tcp_nodelay(true);
}

ApiClient::~ApiClient() = default;

Reply ApiClient::Finish(void* raw) {
  auto& result = *static_cast<httplib::Result*>(raw);
  Reply r;
  if (!result) return r;
  r.status = result->status;
  r.body = result->body;
  r.sha256_header = result->get_header_value("X-Scimesh-Sha256");
  r.retry_after = result->get_header_value("Retry-After");
  r.json = std::make_shared<rapidjson::Document>();
  if (r.json->Parse(r.body.c_str()).HasParseError()) r.json->SetObject();
  return r;
}

Reply ApiClient::Get(const std::string& path) { return Raw("GET", path, "", {}); }
Reply ApiClient::Post(const std::string& path, const std::string& body) { return Raw("POST", path, body, {}); }

Reply ApiClient::Put(const std::string& path, const std::string& body, const std::string& sha256,
                     const std::string& content_type) {
  return Raw("PUT", path, body, {{"X-Scimesh-Sha256", sha256}, {"Content-Type", content_type}});
}

Reply ApiClient::Raw(const std::string& method, const std::string& path, const std::string& body,
                     const std::vector<std::pair<std::string, std::string>>& headers) {
  httplib::Headers h;
  bool has_auth = false;
  std::string content_type = "application/json";
  for (const auto& [k, v] : headers) {
    if (k == "Authorization") has_auth = true;
    if (k == "Content-Type") {
      content_type = v;
      continue;
    }
    h.emplace(k, v);
  }
  if (!has_auth && !token_.empty()) h.emplace("Authorization", "Bearer " + token_);
  httplib::Result res = method == "GET"    ? cli_->Get(path, h)
                        : method == "PUT"  ? cli_->Put(path, h, body, content_type)
                                           : cli_->Post(path, h, body, content_type);
  return Finish(&res);
}

Reply ApiClient::Register(const std::string& worker_id, const std::string& definitions_json) {
  return Post("/v1/api/workers/register", R"({"worker_id":)" + Quote(worker_id) +
                                              R"(,"host":"localhost","version":"test 1","concurrency":4,"definitions":)" +
                                              definitions_json + "}");
}

Reply ApiClient::Claim(const std::string& worker_id, int max, int wait_ms, const std::string& extra_members) {
  return Post("/v1/api/steps/claim", R"({"worker_id":)" + Quote(worker_id) + R"(,"max":)" + std::to_string(max) +
                                         R"(,"wait_ms":)" + std::to_string(wait_ms) + extra_members + "}");
}

Reply ApiClient::Started(const std::string& lease, const std::string& worker_id, int64_t attempt) {
  return Post("/v1/api/steps/" + lease + "/started",
              R"({"worker_id":)" + Quote(worker_id) + R"(,"attempt":)" + std::to_string(attempt) + "}");
}

Reply ApiClient::Heartbeat(const std::string& lease, const std::string& worker_id, int64_t attempt) {
  return Post("/v1/api/steps/" + lease + "/heartbeat",
              R"({"worker_id":)" + Quote(worker_id) + R"(,"attempt":)" + std::to_string(attempt) + "}");
}

Reply ApiClient::Complete(const std::string& lease, const std::string& worker_id, int64_t attempt,
                          const std::string& output_json, const std::string& extra_members) {
  return Post("/v1/api/steps/" + lease + "/complete", R"({"worker_id":)" + Quote(worker_id) + R"(,"attempt":)" +
                                                          std::to_string(attempt) + R"(,"output":)" + output_json +
                                                          extra_members + "}");
}

Reply ApiClient::Fail(const std::string& lease, const std::string& worker_id, int64_t attempt,
                      const std::string& cls, const std::string& message) {
  return Post("/v1/api/steps/" + lease + "/fail", R"({"worker_id":)" + Quote(worker_id) + R"(,"attempt":)" +
                                                      std::to_string(attempt) + R"(,"error":{"class":)" + Quote(cls) +
                                                      R"(,"message":)" + Quote(message) + "}}");
}

Reply ApiClient::StartRun(const std::string& workflow, const std::string& input_json,
                          const std::string& extra_members) {
  return Post("/v1/api/runs", R"({"workflow":)" + Quote(workflow) + R"(,"input":)" + input_json + extra_members + "}");
}

Reply ApiClient::ShowRun(const std::string& run_id) { return Get("/v1/api/runs/" + run_id); }
Reply ApiClient::Journal(const std::string& run_id) { return Get("/v1/api/runs/" + run_id + "/journal"); }
Reply ApiClient::CancelRun(const std::string& run_id) { return Post("/v1/api/runs/" + run_id + "/cancel", ""); }

}  // namespace scimesh::coordinator::testing

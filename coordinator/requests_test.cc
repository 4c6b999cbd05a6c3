// Tests of the request parsers, including every example request in
// docs/protocol/ (they must all be accepted: the document and the code
// cannot drift apart).
#include "coordinator/requests.h"

#include <dirent.h>

#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

namespace scimesh::coordinator {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The parser for each example request, by file name.
const std::map<std::string, std::function<std::optional<ApiError>(const rapidjson::Value&)>>& Parsers() {
  static const std::map<std::string, std::function<std::optional<ApiError>(const rapidjson::Value&)>> kParsers = {
      {"register.request.json",
       [](const rapidjson::Value& v) -> std::optional<ApiError> {
         auto r = ParseRegisterRequest(v);
         return r.ok() ? std::nullopt : std::optional(r.error());
       }},
      {"claim.request.json",
       [](const rapidjson::Value& v) -> std::optional<ApiError> {
         auto r = ParseClaimRequest(v);
         return r.ok() ? std::nullopt : std::optional(r.error());
       }},
      {"started.request.json",
       [](const rapidjson::Value& v) -> std::optional<ApiError> {
         auto r = ParseStartedRequest(v);
         return r.ok() ? std::nullopt : std::optional(r.error());
       }},
      {"heartbeat.request.json",
       [](const rapidjson::Value& v) -> std::optional<ApiError> {
         auto r = ParseHeartbeatRequest(v);
         return r.ok() ? std::nullopt : std::optional(r.error());
       }},
      {"complete.request.json",
       [](const rapidjson::Value& v) -> std::optional<ApiError> {
         auto r = ParseCompleteRequest(v);
         return r.ok() ? std::nullopt : std::optional(r.error());
       }},
      {"fail.request.json",
       [](const rapidjson::Value& v) -> std::optional<ApiError> {
         auto r = ParseFailRequest(v);
         return r.ok() ? std::nullopt : std::optional(r.error());
       }},
      {"run.create.request.json",
       [](const rapidjson::Value& v) -> std::optional<ApiError> {
         auto r = ParseRunCreateRequest(v);
         return r.ok() ? std::nullopt : std::optional(r.error());
       }},
  };
  return kParsers;
}

TEST(ProtocolExamples, EveryExampleRequestIsAccepted) {
  DIR* d = ::opendir(SCIMESH_PROTOCOL_EXAMPLES);
  ASSERT_NE(d, nullptr) << SCIMESH_PROTOCOL_EXAMPLES;
  int seen = 0;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.size() < 13 || name.substr(name.size() - 13) != ".request.json") continue;
    ++seen;
    auto parser = Parsers().find(name);
    ASSERT_NE(parser, Parsers().end()) << "no coordinator parser for " << name;
    auto doc = ParseJson(Slurp(std::string(SCIMESH_PROTOCOL_EXAMPLES) + "/" + name));
    ASSERT_TRUE(doc.ok()) << name << ": " << doc.error().message;
    auto error = parser->second(*doc.value());
    EXPECT_FALSE(error.has_value()) << name << ": " << error->field << " " << error->message;
  }
  ::closedir(d);
  EXPECT_EQ(seen, static_cast<int>(Parsers().size()));
}

std::unique_ptr<rapidjson::Document> Doc(const std::string& s) {
  auto d = ParseJson(s);
  EXPECT_TRUE(d.ok()) << s;
  return std::move(d).value();
}

template <typename R>
std::string FieldOf(const R& r) {
  return r.ok() ? "(accepted)" : r.error().field;
}

TEST(ParseClaimRequest, ReadsFieldsAndDefaults) {
  auto r = ParseClaimRequest(*Doc(R"({"worker_id":"w","max":3})"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().max, 3);
  EXPECT_EQ(r.value().wait_ms, 0);
  EXPECT_FALSE(r.value().free.has_value());
  EXPECT_FALSE(r.value().run_id.has_value());
}

TEST(ParseClaimRequest, RefusesOutOfRangeAndWrongTypes) {
  EXPECT_EQ(FieldOf(ParseClaimRequest(*Doc(R"({"worker_id":"w","max":0})"))), "max");
  EXPECT_EQ(FieldOf(ParseClaimRequest(*Doc(R"({"worker_id":"w","max":65})"))), "max");
  EXPECT_EQ(FieldOf(ParseClaimRequest(*Doc(R"({"worker_id":"w","max":"2"})"))), "max");
  EXPECT_EQ(FieldOf(ParseClaimRequest(*Doc(R"({"worker_id":"w","max":1,"wait_ms":60001})"))), "wait_ms");
  EXPECT_EQ(FieldOf(ParseClaimRequest(*Doc(R"({"worker_id":"w w","max":1})"))), "worker_id");
  EXPECT_EQ(FieldOf(ParseClaimRequest(*Doc(R"({"max":1})"))), "worker_id");
  EXPECT_EQ(FieldOf(ParseClaimRequest(*Doc(R"({"worker_id":"w","max":1,"free":{"walltime_s":1}})"))), "free.nodes");
  EXPECT_EQ(FieldOf(ParseClaimRequest(*Doc(
                R"({"worker_id":"w","max":1,"free":{"walltime_s":1,"nodes":[{"name":"n","cpus":-1,"gpus":0}]}})"))),
            "free.nodes[0].cpus");
  EXPECT_EQ(FieldOf(ParseClaimRequest(*Doc(R"([])"))), "");
}

TEST(ParseFailRequest, KnownClassesOnlyAndTheMessageIsCut) {
  EXPECT_EQ(FieldOf(ParseFailRequest(*Doc(R"({"worker_id":"w","attempt":1,"error":{"class":"oops","message":""}})"))),
            "error.class");
  EXPECT_EQ(FieldOf(ParseFailRequest(*Doc(R"({"worker_id":"w","attempt":0,"error":{"class":"fatal","message":""}})"))),
            "attempt");
  EXPECT_EQ(FieldOf(ParseFailRequest(*Doc(R"({"worker_id":"w","attempt":1})"))), "error");
  std::string long_message(5000, 'm');
  auto r = ParseFailRequest(
      *Doc(R"({"worker_id":"w","attempt":1,"error":{"class":"unservable","message":")" + long_message + "\"}}"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().error_class, FailClass::kUnservable);
  EXPECT_EQ(r.value().message.size(), kMaxErrorMessageBytes);
}

TEST(ParseCompleteRequest, OutputMustBeAnObject) {
  EXPECT_EQ(FieldOf(ParseCompleteRequest(*Doc(R"({"worker_id":"w","attempt":1})"))), "output");
  EXPECT_EQ(FieldOf(ParseCompleteRequest(*Doc(R"({"worker_id":"w","attempt":1,"output":[1]})"))), "output");
  EXPECT_EQ(FieldOf(ParseCompleteRequest(*Doc(R"({"worker_id":"w","attempt":1,"output":{},"artifacts":[{"name":"a"}]})"))),
            "artifacts[0].uri");
  auto r = ParseCompleteRequest(*Doc(R"({"worker_id":"w","attempt":1,"output":{},"extra":"ignored"})"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().output_json, "{}");
}

TEST(ParseHeartbeatRequest, ProgressIsLimited) {
  std::string big = "\"" + std::string(5000, 'p') + "\"";
  EXPECT_EQ(FieldOf(ParseHeartbeatRequest(*Doc(R"({"worker_id":"w","attempt":1,"progress":)" + big + "}"))),
            "progress");
  auto r = ParseHeartbeatRequest(*Doc(R"({"worker_id":"w","attempt":1,"progress":{"i":1}})"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().progress_json, R"({"i":1})");
}

TEST(ParseRunCreateRequest, InputMustBeAnObject) {
  EXPECT_EQ(FieldOf(ParseRunCreateRequest(*Doc(R"({"workflow":"w","input":1})"))), "input");
  EXPECT_EQ(FieldOf(ParseRunCreateRequest(*Doc(R"({"workflow":"w","input":{},"deadline_s":0})"))), "deadline_s");
  auto r = ParseRunCreateRequest(*Doc(R"({"workflow":"w","input":{}})"));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r.value().correlation_json.has_value());  // stored as null
  EXPECT_FALSE(r.value().version.has_value());
}

TEST(ParseRegisterRequest, NamesTheDefinitionField) {
  auto r = ParseRegisterRequest(*Doc(R"({"worker_id":"w","host":"h","version":"1","concurrency":1,
      "definitions":[{"workflow":"a","version":"1","steps":[{"id":"s","needs":["s"]}]}]})"));
  EXPECT_EQ(FieldOf(r), "definitions[0].steps[0].needs");
  r = ParseRegisterRequest(*Doc(R"({"worker_id":"w","host":"h","version":"1","concurrency":0,"definitions":[]})"));
  EXPECT_EQ(FieldOf(r), "concurrency");
}

// The client refuses a lease whose step id is "." or ".." (it names a
// directory), so the coordinator must never accept one: a claim holding it
// would be dropped whole by every worker, with the other leases in it.
TEST(ParseRegisterRequest, RefusesDotAndDotDotAsTheClientDoes) {
  auto with = [](const std::string& workflow, const std::string& version, const std::string& step) {
    return ParseRegisterRequest(*Doc(R"({"worker_id":"w","host":"h","version":"1","concurrency":1,
        "definitions":[{"workflow":")" + workflow + R"(","version":")" + version + R"(","steps":[{"id":")" +
                                     step + R"("}]}]})"));
  };
  EXPECT_EQ(FieldOf(with("a", "1", "..")), "definitions[0].steps[0].id");
  EXPECT_EQ(FieldOf(with("a", "1", ".")), "definitions[0].steps[0].id");
  EXPECT_EQ(FieldOf(with("..", "1", "s")), "definitions[0].workflow");
  EXPECT_EQ(FieldOf(with("a", ".", "s")), "definitions[0].version");
  EXPECT_TRUE(with("a.b", "1.0", "..s").ok());
}

TEST(ParseArtifactQuery, NeedsWorkerAndAttempt) {
  std::string w = "w1", a = "2", bad = "2x";
  EXPECT_TRUE(ParseArtifactQuery(&w, &a).ok());
  EXPECT_EQ(FieldOf(ParseArtifactQuery(nullptr, &a)), "worker_id");
  EXPECT_EQ(FieldOf(ParseArtifactQuery(&w, nullptr)), "attempt");
  EXPECT_EQ(FieldOf(ParseArtifactQuery(&w, &bad)), "attempt");
}

}  // namespace
}  // namespace scimesh::coordinator

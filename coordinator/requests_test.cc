// Tests of the coordinator's reading of requests (protocol's parsers under
// the server's limits), including every example request in docs/protocol/
// (they must all be accepted: the document and the code cannot drift
// apart), and the field path each refusal names.
#include "coordinator/requests.h"

#include <dirent.h>

#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "protocol/wire/wire_json.h"
#include "protocol/wire/wire_limits.h"

namespace scimesh::coordinator {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The parser for each example request, by file name.
const std::map<std::string, std::function<std::optional<ApiError>(std::string_view)>>& Parsers() {
  static const std::map<std::string, std::function<std::optional<ApiError>(std::string_view)>> kParsers = {
      {"register.request.json",
       [](std::string_view v) -> std::optional<ApiError> {
         auto r = ReadRegisterRequest(v);
         return r.ok() ? std::nullopt : std::optional(r.error());
       }},
      {"claim.request.json",
       [](std::string_view v) -> std::optional<ApiError> {
         auto r = ReadClaimRequest(v);
         return r.ok() ? std::nullopt : std::optional(r.error());
       }},
      {"started.request.json",
       [](std::string_view v) -> std::optional<ApiError> {
         auto r = ReadStartedRequest(v);
         return r.ok() ? std::nullopt : std::optional(r.error());
       }},
      {"heartbeat.request.json",
       [](std::string_view v) -> std::optional<ApiError> {
         auto r = ReadHeartbeatRequest(v);
         return r.ok() ? std::nullopt : std::optional(r.error());
       }},
      {"complete.request.json",
       [](std::string_view v) -> std::optional<ApiError> {
         auto r = ReadCompleteRequest(v);
         return r.ok() ? std::nullopt : std::optional(r.error());
       }},
      {"fail.request.json",
       [](std::string_view v) -> std::optional<ApiError> {
         auto r = ReadFailRequest(v);
         return r.ok() ? std::nullopt : std::optional(r.error());
       }},
      {"run.create.request.json",
       [](std::string_view v) -> std::optional<ApiError> {
         auto r = ReadRunCreateRequest(v);
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
    auto error = parser->second(Slurp(std::string(SCIMESH_PROTOCOL_EXAMPLES) + "/" + name));
    EXPECT_FALSE(error.has_value()) << name << ": " << error->field << " " << error->message;
  }
  ::closedir(d);
  EXPECT_EQ(seen, static_cast<int>(Parsers().size()));
}

template <typename R>
std::string FieldOf(const R& r) {
  return r.ok() ? "(accepted)" : r.error().field;
}

TEST(ReadClaimRequest, ReadsFieldsAndDefaults) {
  auto r = ReadClaimRequest((R"({"worker_id":"w","max":3})"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().max, 3);
  EXPECT_EQ(r.value().wait_ms, 0);
  EXPECT_FALSE(r.value().free.has_value());
  EXPECT_FALSE(r.value().run_id.has_value());
}

TEST(ReadClaimRequest, RefusesOutOfRangeAndWrongTypes) {
  EXPECT_EQ(FieldOf(ReadClaimRequest((R"({"worker_id":"w","max":0})"))), "max");
  EXPECT_EQ(FieldOf(ReadClaimRequest((R"({"worker_id":"w","max":65})"))), "max");
  EXPECT_EQ(FieldOf(ReadClaimRequest((R"({"worker_id":"w","max":"2"})"))), "max");
  EXPECT_EQ(FieldOf(ReadClaimRequest((R"({"worker_id":"w","max":1,"wait_ms":60001})"))), "wait_ms");
  EXPECT_EQ(FieldOf(ReadClaimRequest((R"({"worker_id":"w w","max":1})"))), "worker_id");
  EXPECT_EQ(FieldOf(ReadClaimRequest((R"({"max":1})"))), "worker_id");
  EXPECT_EQ(FieldOf(ReadClaimRequest((R"({"worker_id":"w","max":1,"free":{"walltime_s":1}})"))), "free.nodes");
  EXPECT_EQ(FieldOf(ReadClaimRequest((
                R"({"worker_id":"w","max":1,"free":{"walltime_s":1,"nodes":[{"name":"n","cpus":-1,"gpus":0}]}})"))),
            "free.nodes[0].cpus");
  EXPECT_EQ(FieldOf(ReadClaimRequest((R"([])"))), "");
}

TEST(ReadFailRequest, KnownClassesOnlyAndTheMessageIsCut) {
  EXPECT_EQ(FieldOf(ReadFailRequest((R"({"worker_id":"w","attempt":1,"error":{"class":"oops","message":""}})"))),
            "error.class");
  EXPECT_EQ(FieldOf(ReadFailRequest((R"({"worker_id":"w","attempt":0,"error":{"class":"fatal","message":""}})"))),
            "attempt");
  EXPECT_EQ(FieldOf(ReadFailRequest((R"({"worker_id":"w","attempt":1})"))), "error");
  std::string long_message(5000, 'm');
  auto r = ReadFailRequest(
      (R"({"worker_id":"w","attempt":1,"error":{"class":"unservable","message":")" + long_message + "\"}}"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().error_class, FailClass::kUnservable);
  EXPECT_EQ(r.value().message.size(), kMaxErrorMessageBytes);
}

TEST(ReadCompleteRequest, OutputMustBeAnObject) {
  EXPECT_EQ(FieldOf(ReadCompleteRequest((R"({"worker_id":"w","attempt":1})"))), "output");
  EXPECT_EQ(FieldOf(ReadCompleteRequest((R"({"worker_id":"w","attempt":1,"output":[1]})"))), "output");
  EXPECT_EQ(FieldOf(ReadCompleteRequest((R"({"worker_id":"w","attempt":1,"output":{},"artifacts":[{"name":"a"}]})"))),
            "artifacts[0].uri");
  auto r = ReadCompleteRequest((R"({"worker_id":"w","attempt":1,"output":{},"extra":"ignored"})"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().output_json, "{}");
}

TEST(ReadHeartbeatRequest, ProgressIsLimited) {
  std::string big = "\"" + std::string(5000, 'p') + "\"";
  EXPECT_EQ(FieldOf(ReadHeartbeatRequest((R"({"worker_id":"w","attempt":1,"progress":)" + big + "}"))),
            "progress");
  auto r = ReadHeartbeatRequest((R"({"worker_id":"w","attempt":1,"progress":{"i":1}})"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().progress_json, R"({"i":1})");
}

TEST(ReadRunCreateRequest, InputMustBeAnObject) {
  EXPECT_EQ(FieldOf(ReadRunCreateRequest((R"({"workflow":"w","input":1})"))), "input");
  EXPECT_EQ(FieldOf(ReadRunCreateRequest((R"({"workflow":"w","input":{},"deadline_s":0})"))), "deadline_s");
  auto r = ReadRunCreateRequest((R"({"workflow":"w","input":{}})"));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r.value().correlation_json.has_value());  // stored as null
  EXPECT_FALSE(r.value().version.has_value());
}

TEST(ReadRegisterRequest, NamesTheDefinitionField) {
  auto r = ReadRegisterRequest((R"({"worker_id":"w","host":"h","version":"1","concurrency":1,
      "definitions":[{"workflow":"a","version":"1","steps":[{"id":"s","needs":["s"]}]}]})"));
  EXPECT_EQ(FieldOf(r), "definitions[0].steps[0].needs");
  r = ReadRegisterRequest((R"({"worker_id":"w","host":"h","version":"1","concurrency":0,"definitions":[]})"));
  EXPECT_EQ(FieldOf(r), "concurrency");
}

// The client refuses a lease whose step id is "." or ".." (it names a
// directory), so the coordinator must never accept one: a claim holding it
// would be dropped whole by every worker, with the other leases in it.
TEST(ReadRegisterRequest, RefusesDotAndDotDotAsTheClientDoes) {
  auto with = [](const std::string& workflow, const std::string& version, const std::string& step) {
    return ReadRegisterRequest((R"({"worker_id":"w","host":"h","version":"1","concurrency":1,
        "definitions":[{"workflow":")" + workflow + R"(","version":")" + version + R"(","steps":[{"id":")" +
                                     step + R"("}]}]})"));
  };
  EXPECT_EQ(FieldOf(with("a", "1", "..")), "definitions[0].steps[0].id");
  EXPECT_EQ(FieldOf(with("a", "1", ".")), "definitions[0].steps[0].id");
  EXPECT_EQ(FieldOf(with("..", "1", "s")), "definitions[0].workflow");
  EXPECT_EQ(FieldOf(with("a", ".", "s")), "definitions[0].version");
  EXPECT_TRUE(with("a.b", "1.0", "..s").ok());
}


// An invalid nested field in each request type: the 400 names its full path
// and why, exactly as docs/protocol.md "Errors" shows them.
TEST(ReadRequests, AnInvalidNestedFieldNamesItsPath) {
  auto expect = [](const auto& r, const std::string& field, const std::string& why) {
    ASSERT_FALSE(r.ok()) << field;
    EXPECT_EQ(r.error().http_status, 400);
    EXPECT_EQ(r.error().field, field);
    EXPECT_EQ(r.error().message, why) << field;
  };
  const std::string reg = R"({"worker_id":"w","host":"h","version":"1","concurrency":1,"definitions":[)";
  expect(ReadRegisterRequest(reg + R"({"workflow":"a","version":"1","steps":[{"id":"s"}]},
      {"workflow":"b","version":"1","steps":[{"id":"s"},{"id":"t"},{"id":"a/b"}]}]})"),
         "definitions[1].steps[2].id", "may only hold [A-Za-z0-9._-]");
  expect(ReadRegisterRequest(reg + R"({"workflow":"a","version":"1","steps":[{"id":"s","resources":{"cpus_per_rank":0}}]}]})"),
         "definitions[0].steps[0].resources.cpus_per_rank", "must be an integer from 1 to 2147483647");
  expect(ReadRegisterRequest(reg + R"({"workflow":"a","version":"1","steps":[{"id":"s","needs":["s",7]}]}]})"),
         "definitions[0].steps[0].needs[1]", "must be a step id");
  // A total rank count would silently run 1 rank per node: refused by both sides.
  expect(ReadRegisterRequest(reg + R"({"workflow":"a","version":"1","steps":[{"id":"s","resources":{"ranks":8}}]}]})"),
         "definitions[0].steps[0].resources.ranks", "a total rank count is not supported; give nodes and ranks_per_node");
  expect(ReadClaimRequest(R"({"worker_id":"w","max":1,"free":{"walltime_s":1,"nodes":[{"name":"n0","cpus":4,"gpus":0},
      {"name":"n1","cpus":"4","gpus":0}]}})"),
         "free.nodes[1].cpus", "must be an integer from 0 to 2147483647");
  expect(ReadClaimRequest(R"({"worker_id":"w","max":1,"free":{"walltime_s":1,"nodes":[{"name":"","cpus":4,"gpus":0}]}})"),
         "free.nodes[0].name", "must be 1 to 255 characters");
  expect(ReadStartedRequest(R"({"worker_id":"w"})"), "attempt", "is required");
  expect(ReadHeartbeatRequest(R"({"worker_id":"w","attempt":null})"), "attempt", "is required");
  expect(ReadCompleteRequest(R"({"worker_id":"w","attempt":1,"output":{},"artifacts":[
      {"name":"a","uri":"u","sha256":")" + std::string(64, 'a') + R"(","size":1,"media_type":"t"},
      {"name":"b","uri":"u","sha256":"ABC","size":1,"media_type":"t"}]})"),
         "artifacts[1].sha256", "must be 64 lowercase hex digits");
  expect(ReadFailRequest(R"({"worker_id":"w","attempt":1,"error":{"class":"fatal","message":7}})"), "error.message",
         "must be a string, not a number");
  expect(ReadRunCreateRequest(R"({"workflow":"w","input":{},"deadline_s":"1"})"), "deadline_s",
         "must be an integer from 1 to 31536000");
  // The body as a whole: no field.
  expect(ReadClaimRequest("[]"), "", "must be an object, not an array");
  expect(ReadClaimRequest(R"({"worker_id":"w",)"), "", "malformed JSON at offset 17: Missing a name for object member.");
}

// The server's JSON limits are tighter than the client's: nesting past 64
// and strings past 64 KiB are refused by the coordinator, with no field.
TEST(ReadRequests, TheServersJsonLimitsApply) {
  std::string deep = R"({"workflow":"w","input":{"x":)" + std::string(63, '[') + std::string(63, ']') + "}}";
  ASSERT_TRUE(scimesh::ParseRunCreateRequest(deep).ok());  // the client's limits take it
  auto r = ReadRunCreateRequest(deep);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().field, "");
  EXPECT_EQ(r.error().message, "nested deeper than the limit of 64");
  std::string long_name = R"({"workflow":"w","input":{"x":")" + std::string(64 * 1024 + 1, 'x') + R"("}})";
  ASSERT_TRUE(scimesh::ParseRunCreateRequest(long_name).ok());
  auto l = ReadRunCreateRequest(long_name);
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.error().message, "a string is longer than the limit of 64 KiB");
}

TEST(ParseArtifactQuery, NeedsWorkerAndAttempt) {
  std::string w = "w1", a = "2", bad = "2x";
  EXPECT_TRUE(ParseArtifactQuery(&w, &a).ok());
  EXPECT_EQ(FieldOf(ParseArtifactQuery(nullptr, &a)), "worker_id");
  EXPECT_EQ(FieldOf(ParseArtifactQuery(&w, nullptr)), "attempt");
  EXPECT_EQ(FieldOf(ParseArtifactQuery(&w, &bad)), "attempt");
}

TEST(ParseRunListQuery, DefaultsBoundsAndRefusalsNamingTheParameter) {
  using Params = std::multimap<std::string, std::string>;
  auto none = ParseRunListQuery({});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none.value().limit, 20);
  EXPECT_FALSE(none.value().workflow || none.value().state);
  auto all = ParseRunListQuery(Params{{"workflow", "mesh-study"}, {"state", "timed_out"}, {"limit", "200"},
                                      {"other", "ignored"}});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all.value().workflow, "mesh-study");
  EXPECT_EQ(all.value().state, "timed_out");
  EXPECT_EQ(all.value().limit, 200);
  for (const char* limit : {"0", "201", "-1", "5x", "", "99999999999999999999"}) {
    EXPECT_EQ(FieldOf(ParseRunListQuery(Params{{"limit", limit}})), "limit") << limit;
  }
  EXPECT_EQ(FieldOf(ParseRunListQuery(Params{{"state", "done"}})), "state");
  EXPECT_EQ(FieldOf(ParseRunListQuery(Params{{"workflow", ".."}})), "workflow");
  EXPECT_EQ(FieldOf(ParseRunListQuery(Params{{"workflow", "a"}, {"workflow", "b"}})), "workflow");
}

TEST(ParseDemandQuery, RepeatedAndCommaListedNamesSortedUniqueAndBounded) {
  using Params = std::multimap<std::string, std::string>;
  auto none = ParseDemandQuery({});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none.value().workflows.empty());
  auto some = ParseDemandQuery(Params{{"workflow", "b,a"}, {"workflow", "c"}, {"workflow", "a"}, {"x", "y"}});
  ASSERT_TRUE(some.ok());
  EXPECT_EQ(some.value().workflows, (std::vector<std::string>{"a", "b", "c"}));
  for (const char* bad : {"", "a,", ",a", "a,,b", "..", "a/b", "a b"}) {
    EXPECT_EQ(FieldOf(ParseDemandQuery(Params{{"workflow", bad}})), "workflow") << bad;
  }
  std::string names = "w0";
  for (int i = 1; i < 64; ++i) names += ",w" + std::to_string(i);
  EXPECT_TRUE(ParseDemandQuery(Params{{"workflow", names}}).ok()) << "64 names";
  EXPECT_EQ(FieldOf(ParseDemandQuery(Params{{"workflow", names + ",w64"}})), "workflow") << "65 names";
}

}  // namespace
}  // namespace scimesh::coordinator

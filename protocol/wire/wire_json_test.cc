// Parses every example in docs/protocol/ with the client's parsers, writes it
// back with the client's writers and checks nothing was lost or invented.
#include "protocol/wire/wire_json.h"

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

#include "protocol/util/json_io.h"

namespace scimesh {
namespace {

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// parse → serialize, for one example file.
using RoundTrip = std::function<Result<std::string>(std::string_view)>;

template <typename T>
RoundTrip Via(Result<T> (*parse)(std::string_view), std::string (*write)(const T&)) {
  return [parse, write](std::string_view text) -> Result<std::string> {
    auto v = parse(text);
    if (!v.ok()) return v.status();
    return write(*v);
  };
}

// A request parser, with the client's limits.
template <typename T>
RoundTrip Via(Result<T> (*parse)(std::string_view, const JsonLimits&), std::string (*write)(const T&)) {
  return [parse, write](std::string_view text) -> Result<std::string> {
    auto v = parse(text, JsonLimits{});
    if (!v.ok()) return v.status();
    return write(*v);
  };
}

const std::map<std::string, RoundTrip>& Examples() {
  static const std::map<std::string, RoundTrip> m = {
      {"register.request.json", Via(ParseRegisterRequest, SerializeRegisterRequest)},
      {"register.response.json", Via(ParseRegisterResponse, SerializeRegisterResponse)},
      {"claim.request.json", Via(ParseClaimRequest, SerializeClaimRequest)},
      {"claim.response.json", Via(ParseClaimResponse, SerializeClaimResponse)},
      {"started.request.json", Via(ParseBeatRequest, SerializeBeatRequest)},
      {"started.response.json", Via(ParseExtendResponse, SerializeExtendResponse)},
      {"heartbeat.request.json", Via(ParseBeatRequest, SerializeBeatRequest)},
      {"heartbeat.response.json", Via(ParseExtendResponse, SerializeExtendResponse)},
      {"complete.request.json", Via(ParseCompleteRequest, SerializeCompleteRequest)},
      {"complete.response.json", Via(ParseCompleteResponse, SerializeCompleteResponse)},
      {"fail.request.json", Via(ParseFailRequest, SerializeFailRequest)},
      {"fail.response.json", Via(ParseFailResponse, SerializeFailResponse)},
      {"artifact.response.json", Via(ParseArtifactRef, SerializeArtifactRef)},
      {"error.400.json", Via(ParseErrorBody, SerializeErrorBody)},
      {"error.409.json", Via(ParseErrorBody, SerializeErrorBody)},
      {"error.409.already_applied.json", Via(ParseErrorBody, SerializeErrorBody)},
      {"run.create.request.json", Via(ParseRunCreateRequest, SerializeRunCreateRequest)},
      {"run.create.response.json", Via(ParseRunStatus, SerializeRunStatus)},
      {"run.cancel.response.json", Via(ParseRunStatus, SerializeRunStatus)},
      {"run.show.response.json", Via(ParseRunView, SerializeRunView)},
      {"run.journal.response.json", Via(ParseJournal, SerializeJournal)},
      {"run.list.response.json", Via(ParseRunList, SerializeRunList)},
      {"demand.response.json", Via(ParseQueuedDemand, SerializeQueuedDemand)},
  };
  return m;
}

TEST(WireJson, EveryDocumentedExampleRoundTripsExactly) {
  const std::filesystem::path dir = SCIMESH_PROTOCOL_DOCS_DIR;
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".json") continue;
    ++seen;
    auto it = Examples().find(name);
    ASSERT_NE(it, Examples().end()) << "no client parser covers docs/protocol/" << name;
    const std::string text = ReadFile(entry.path());
    auto written = it->second(text);
    ASSERT_TRUE(written.ok()) << name << ": " << written.status().ToString();
    auto original = ParseJson(text, name);
    auto again = ParseJson(*written, name);
    ASSERT_TRUE(original.ok() && again.ok()) << name;
    // Deep, member-order-insensitive equality: no field lost, none invented.
    EXPECT_TRUE(*original == *again) << name << "\n wrote: " << *written;
  }
  EXPECT_EQ(seen, static_cast<int>(Examples().size())) << "an example file is missing";
}

TEST(WireJson, LeaseKeepsEveryField) {
  auto claim = ParseClaimResponse(ReadFile(std::filesystem::path(SCIMESH_PROTOCOL_DOCS_DIR) /
                                           "claim.response.json"));
  ASSERT_TRUE(claim.ok()) << claim.status().ToString();
  ASSERT_EQ(claim->leases.size(), 1u);
  const Lease& l = claim->leases[0];
  EXPECT_EQ(l.lease_id, "l_0c8e51d2a4b94f17");
  EXPECT_EQ(l.run_id, "r_6f1c2a9e0b7d4c35");
  EXPECT_EQ(l.step_id, "report");
  EXPECT_EQ(l.attempt, 1);
  EXPECT_EQ(l.delivery, Delivery::kAtMostOnce);
  EXPECT_EQ(l.correlation_json, R"({"ticket":"CFD-118"})");
  EXPECT_EQ(l.previous_json, R"({"solve-16":{"iterations":41,"l2_error":0.0031}})");
  EXPECT_EQ(l.resources, (Resources{1, 1, 1, 0}));
  ASSERT_EQ(l.input_artifacts.size(), 1u);
  EXPECT_EQ(l.input_artifacts[0].step_id, "solve-16");
  EXPECT_EQ(l.input_artifacts[0].size, 4);
  EXPECT_EQ(l.lease_ttl_ms, 30000);
  EXPECT_EQ(l.heartbeat_ms, 10000);
  EXPECT_EQ(l.idempotency_key, "r_6f1c2a9e0b7d4c35/report");

  auto again = ParseLease(SerializeLease(l, "http://127.0.0.1:8470"));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->input_json, l.input_json);
}

// The documented claim response with leases[0].<field> replaced by `value_json`.
std::string LeaseWith(const std::string& field, const std::string& value_json) {
  const std::string text =
      ReadFile(std::filesystem::path(SCIMESH_PROTOCOL_DOCS_DIR) / "claim.response.json");
  rapidjson::Document d;
  d.Parse(text.c_str());
  rapidjson::Document v;
  v.Parse(value_json.c_str());
  d["leases"][0][field.c_str()].CopyFrom(v, d.GetAllocator());
  return ToJsonText(d);
}

// An input artifact is read by the rules of every artifact reference (one
// rule: ArtifactRefFrom), with its step's id first.
TEST(WireJson, AnInputArtifactIsHeldToTheRulesOfEveryArtifact) {
  const std::string sha(64, 'a');
  auto artifact = [&](const std::string& step, const std::string& name, const std::string& size,
                      const std::string& media_type) {
    return R"([{"step_id":")" + step + R"(","name":")" + name + R"(","uri":"http://c/v1/artifacts/)" + sha +
           R"(","sha256":")" + sha + R"(","size":)" + size + R"(,"media_type":")" + media_type + R"("}])";
  };
  ASSERT_TRUE(ParseClaimResponse(LeaseWith("input_artifacts", artifact("solve-16", "a.vti", "4", "x/y"))).ok());
  const std::pair<std::string, std::string> refused[] = {
      {artifact("../up", "a.vti", "4", "x/y"), "leases[0].input_artifacts[0].step_id"},
      {artifact("solve-16", "../a.vti", "4", "x/y"), "leases[0].input_artifacts[0].name"},
      {artifact("solve-16", "a.vti", "-1", "x/y"), "leases[0].input_artifacts[0].size"},
      {artifact("solve-16", "a.vti", "4", ""), "leases[0].input_artifacts[0].media_type"},
  };
  for (const auto& [value, field] : refused) {
    auto c = ParseClaimResponse(LeaseWith("input_artifacts", value));
    ASSERT_FALSE(c.ok()) << value;
    EXPECT_EQ(c.status().message().rfind(field + ": ", 0), 0u) << c.status().ToString();
  }
}

TEST(WireJson, WhyARunEndedIsKeptAndAnOlderCoordinatorsAnswerReadsAsNull) {
  const std::string run = R"({"run_id":"r_1","workflow":"w","version":"1","status":"failed","input":{},)"
                          R"("state":{},"correlation":null,"created_at":"2026-11-29T07:59:58.000Z",)"
                          R"("finished_at":null,"deadline_at":null,"reason":"step a failed: fatal: x",)"
                          R"("steps":[{"step_id":"a","status":"failed","attempts":[{"attempt":1,"lease_id":"l_1",)"
                          R"("worker_id":"w","host":"n1","status":"failed","claimed_at":null,"started_at":null,)"
                          R"("ended_at":null,"error":{"class":"fatal","message":"x"},"progress":null,"usage":null}],)"
                          R"("output":null,"artifacts":[],"unfittable":null,"error":{"class":"fatal","message":"x"}}]})";
  auto v = ParseRunView(run);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->reason, "step a failed: fatal: x");
  EXPECT_EQ(v->steps.at(0).error_json, R"({"class":"fatal","message":"x"})");
  EXPECT_EQ(v->steps[0].attempts.at(0).host, "n1");
  EXPECT_EQ(SerializeRunView(*v), run);
  // Without `reason`, `error` and `host` (a coordinator from before them): null.
  std::string older = std::regex_replace(run, std::regex(R"re("reason":"[^"]*",|"host":"n1",|,"error":\{[^}]*\}\}\]\}$)re"), "");
  older += "}]}";
  auto o = ParseRunView(older);
  ASSERT_TRUE(o.ok()) << o.status().ToString() << " " << older;
  EXPECT_EQ(o->reason, std::nullopt) << older;
  EXPECT_EQ(o->steps.at(0).error_json, "null") << older;
  EXPECT_EQ(o->steps[0].attempts.at(0).host, std::nullopt) << older;
}

TEST(WireJson, AnUnfittableStepKeepsItsReason) {
  const std::string step =
      R"({"step_id":"big","status":"queued","attempts":[],"output":null,"artifacts":[],)"
      R"("unfittable":{"reason":"needs 3 nodes, largest offer 2","workers":2},"error":null})";
  const std::string run = R"({"run_id":"r_1","workflow":"w","version":"1","status":"running","input":{},)"
                          R"("state":{},"correlation":null,"created_at":"2026-11-29T07:59:58.000Z",)"
                          R"("finished_at":null,"deadline_at":null,"reason":null,"steps":[)" + step + "]}";
  auto v = ParseRunView(run);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  ASSERT_TRUE(v->steps.at(0).unfittable);
  EXPECT_EQ(v->steps[0].unfittable->reason, "needs 3 nodes, largest offer 2");
  EXPECT_EQ(v->steps[0].unfittable->workers, 2);
  EXPECT_EQ(SerializeRunView(*v), run);
  auto bad = ParseRunView(run.substr(0, run.find(R"("workers")")) + R"("workers":"two"}}]})");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unfittable.workers"), std::string::npos) << bad.status().message();
}

TEST(WireJson, HostileLeaseFieldsAreRefusedWithTheirPath) {
  struct Case {
    std::string field, value, expect;
  };
  const Case cases[] = {
      {"step_id", R"("../../etc")", "leases[0].step_id"},
      {"step_id", R"("..")", "leases[0].step_id"},
      {"run_id", R"("r_/tmp/x")", "leases[0].run_id"},
      {"lease_id", R"("l_0c8e51d2a4b94f1")", "leases[0].lease_id"},
      {"attempt", R"("1")", "leases[0].attempt"},
      {"attempt", "0", "leases[0].attempt"},
      {"delivery", R"("exactly_once")", "leases[0].delivery"},
      {"previous", "[]", "leases[0].previous"},
      {"lease_ttl_ms", "0", "lease_ttl_ms"},
  };
  for (const auto& c : cases) {
    auto r = ParseClaimResponse(LeaseWith(c.field, c.value));
    ASSERT_FALSE(r.ok()) << c.field << "=" << c.value;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.expect), std::string::npos) << r.status().ToString();
  }
}

TEST(WireJson, HostileArtifactNamesAreRefused) {
  for (const char* name : {"../x", "/etc/passwd", ".hidden", "a/b", ""}) {
    ArtifactRef a{name, "http://127.0.0.1/x", std::string(64, 'a'), 1, "text/plain"};
    auto r = ParseArtifactRef(SerializeArtifactRef(a));
    EXPECT_FALSE(r.ok()) << name;
  }
  ArtifactRef bad_sha{"ok.txt", "http://127.0.0.1/x", std::string(64, 'A'), 1, "text/plain"};
  EXPECT_FALSE(ParseArtifactRef(SerializeArtifactRef(bad_sha)).ok());
}

// Found by fuzz/client_responses_fuzzer: an error body whose message held
// "\udc00" parsed, but what it was written back as did not.
TEST(WireJson, LoneSurrogateEscapesAreRefused) {
  EXPECT_FALSE(ParseErrorBody(R"({"error":"conflict","message":"x\udc00"})").ok());
  EXPECT_FALSE(ParseErrorBody(R"({"error":"conflict","message":"x\ud800y"})").ok());
  auto fine = ParseErrorBody(R"({"error":"conflict","message":"\ud83d\ude00"})");
  ASSERT_TRUE(fine.ok());
  EXPECT_EQ(fine->message, "\xF0\x9F\x98\x80");
  EXPECT_TRUE(IsWellFormedUtf8("plain \xC3\xA9 \xE2\x82\xAC \xF4\x8F\xBF\xBF"));
  for (const char* bad : {"\xED\xA0\x80", "\xC0\xAF", "\xE0\x80\xAF", "\xF4\x90\x80\x80", "\xF5", "\xC3"}) {
    EXPECT_FALSE(IsWellFormedUtf8(bad)) << bad;
  }
}

// As the coordinator: a key that repeats in one object is refused, so both
// sides never take different duplicates for the message.
TEST(WireJson, AKeyThatRepeatsInAnObjectIsRefused) {
  auto r = ParseErrorBody(R"({"error":"conflict","reason":"fenced","reason":"run_terminal","message":""})");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("repeats"), std::string::npos) << r.status().message();
  EXPECT_TRUE(ParseErrorBody(R"({"error":"conflict","message":"","x":{"error":1}})").ok());
}

// Found by fuzz/client_responses_fuzzer: 0.0031444444444444447 in a run's
// output came back one ulp off. A number in a lease's input reaches the step
// as the coordinator wrote it.
TEST(WireJson, NumbersReadBackAsTheyWereWritten) {
  for (const char* text : {R"({"x":1e-81})", R"({"x":0.0031444444444444447})", R"({"x":5e-324})",
                           R"([0,-1,2147483648,-9223372036854775808,18446744073709551615,-0.0,1.5])"}) {
    auto canonical = CanonicalJson(text, "input");
    ASSERT_TRUE(canonical.ok()) << text;
    EXPECT_EQ(*canonical, text);
  }
  auto zero = CanonicalJson("[0e-74,1e-400]", "input");
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ(*zero, "[0.0,0.0]");
  EXPECT_FALSE(CanonicalJson("[1e400]", "input").ok());
}

TEST(WireJson, MalformedAndTooDeepJsonIsAnErrorNotACrash) {
  EXPECT_EQ(ParseClaimResponse("{\"leases\": [").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ParseExtendResponse("").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ParseExtendResponse("[]").status().code(), Code::kInvalidArgument);
  std::string deep(100000, '[');
  auto r = ParseClaimResponse(deep);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("deeper"), std::string::npos);
  // Brackets inside strings do not count as depth.
  std::string in_string = R"({"lease_expires_at":")" + std::string(500, '[') + R"(","lease_ttl_ms":5})";
  EXPECT_TRUE(ParseExtendResponse(in_string).ok());
}

TEST(WireJson, WrongTypesNameTheField) {
  auto r = ParseExtendResponse(R"({"lease_expires_at":"x","lease_ttl_ms":"30000"})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "lease_ttl_ms: must be an integer, not a string");
  auto f = ParseFailRequest(R"({"worker_id":"w","attempt":1,"error":{"class":"oops","message":""}})");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("error.class"), std::string::npos);
}

// A refusal keeps the field's path apart from why, for a reply that names it
// (the coordinator's 400): nested objects and array elements alike.
TEST(WireJson, RefusalsCarryTheFieldPath) {
  auto c = ParseClaimRequest(R"({"worker_id":"w","max":1,"free":{"walltime_s":1,
      "nodes":[{"name":"a","cpus":1,"gpus":0},{"name":"b","cpus":-1,"gpus":0}]}})");
  ASSERT_FALSE(c.ok());
  ASSERT_TRUE(c.status().field().has_value());
  EXPECT_EQ(*c.status().field(), "free.nodes[1].cpus");
  EXPECT_EQ(c.status().why(), "must be an integer from 0 to 2147483647");
  EXPECT_EQ(c.status().message(), "free.nodes[1].cpus: must be an integer from 0 to 2147483647");
  auto r = ParseRegisterRequest(R"({"worker_id":"w","host":"h","version":"1","concurrency":1,"definitions":[
      {"workflow":"a","version":"1","steps":[{"id":"s"},{"id":"t","retry_on":["timeout","fatal"]}]}]})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().field().value_or("(none)"), "definitions[0].steps[1].retry_on[1]");
  // The text as a whole: the field is "", the message keeps its context.
  auto m = ParseBeatRequest("{");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().field().value_or("(none)"), "");
  EXPECT_EQ(m.status().message().rfind("lease call: malformed JSON", 0), 0u) << m.status().message();
  // Other statuses name no field.
  EXPECT_FALSE(Status::Internal("x").field().has_value());
}

TEST(WireJson, EnumNamesRoundTrip) {
  for (auto r : {RefusalReason::kAlreadyApplied, RefusalReason::kFenced, RefusalReason::kRunTerminal,
                 RefusalReason::kNotStarted}) {
    EXPECT_EQ(ParseRefusalReason(RefusalReasonName(r)), r);
  }
  for (auto c : {FailClass::kRetryable, FailClass::kTimeout, FailClass::kCancelled,
                 FailClass::kNodeFailure, FailClass::kInvalidOutput, FailClass::kInputChecksum,
                 FailClass::kFatal, FailClass::kUnservable, FailClass::kPreempted}) {
    EXPECT_EQ(ParseFailClass(FailClassName(c)), c);
  }
  EXPECT_FALSE(ParseRefusalReason("stale").has_value());
  EXPECT_FALSE(ParseFailClass("Fatal").has_value());
}

TEST(WireJson, StepMayReportOnlyTheClassesOfItsOwnFailure) {
  for (auto c : {FailClass::kRetryable, FailClass::kTimeout, FailClass::kInvalidOutput, FailClass::kInputChecksum,
                 FailClass::kFatal}) {
    EXPECT_TRUE(StepMayReport(c)) << FailClassName(c);
  }
  for (auto c : {FailClass::kCancelled, FailClass::kNodeFailure, FailClass::kUnservable, FailClass::kPreempted,
                 FailClass::kStorageFull}) {
    EXPECT_FALSE(StepMayReport(c)) << FailClassName(c);
  }
}

}  // namespace
}  // namespace scimesh

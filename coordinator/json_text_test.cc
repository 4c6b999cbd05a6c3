// Tests of the coordinator's JSON reading (protocol/json_io.h's ParseJson
// under the server's limits, kServerJsonLimits): depth, string length,
// UTF-8, repeated keys, exact numbers.
#include "coordinator/json_text.h"

#include <gtest/gtest.h>

namespace scimesh::coordinator {
namespace {

std::string Nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(ParseJson, AcceptsDepthUpToTheLimit) {
  EXPECT_TRUE(ParseJson(Nested(64)).ok());
  auto deep = ParseJson(Nested(65));
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.status().code(), Code::kInvalidArgument);
  EXPECT_NE(deep.status().message().find("deeper"), std::string::npos);
}

TEST(ParseJson, TheClientsLimitsAllowDeeperNesting) {
  EXPECT_TRUE(scimesh::ParseJson(Nested(65), "test").ok());
  EXPECT_FALSE(scimesh::ParseJson(Nested(129), "test").ok());
}

TEST(ParseJson, HugeDepthDoesNotOverflowTheStack) {
  EXPECT_FALSE(ParseJson(Nested(1000000)).ok());
}

TEST(ParseJson, RefusesLongStringsAndKeys) {
  std::string ok = "\"" + std::string(64 * 1024, 'x') + "\"";
  std::string long_value = "\"" + std::string(64 * 1024 + 1, 'x') + "\"";
  std::string long_key = "{\"" + std::string(64 * 1024 + 1, 'k') + "\":1}";
  EXPECT_TRUE(ParseJson(ok).ok());
  EXPECT_FALSE(ParseJson(long_value).ok());
  EXPECT_FALSE(ParseJson(long_key).ok());
  // The client's limits (the defaults) take them: only the server caps strings.
  EXPECT_TRUE(scimesh::ParseJson(long_value, "test").ok());
}

TEST(ParseJson, RefusesMalformedTrailingGarbageAndBadUtf8) {
  EXPECT_FALSE(ParseJson("{").ok());
  EXPECT_FALSE(ParseJson("{} x").ok());
  EXPECT_FALSE(ParseJson("").ok());
  EXPECT_FALSE(ParseJson("\"\xff\"").ok());
  EXPECT_FALSE(ParseJson(std::string("{\"a\":1}\0", 8)).ok());
  // Found by fuzz/coordinator_requests_fuzzer: a body that ends inside a
  // string on a UTF-8 lead byte made RapidJSON read past the copy's end
  // (caught under the asan and fuzz presets; a 400 either way).
  EXPECT_FALSE(ParseJson(std::string_view("{\"x\":\"\xf3", 7)).ok());
  EXPECT_FALSE(ParseJson(std::string_view("\"\xf4", 2)).ok());
  auto bad = ParseJson("{\"a\":}");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("offset"), std::string::npos);
}

// Found by fuzz/coordinator_requests_fuzzer: a definition's canonical text
// did not read back the same, because 1e-81 was parsed one ulp off.
TEST(ParseJson, NumbersReadBackAsTheyWereWritten) {
  for (const char* text : {R"({"x":1e-81})", R"({"x":0.1})", R"({"x":1.7976931348623157e308})",
                           R"({"x":5e-324})", R"({"x":2.2250738585072014e-308})", R"({"x":123456789.12345679})",
                           R"([0,-1,2147483648,-9223372036854775808,18446744073709551615,-0.0,1.5])"}) {
    auto doc = ParseJson(text);
    ASSERT_TRUE(doc.ok()) << text;
    EXPECT_EQ(ToJsonText(*doc.value()), text);
  }
  // Integers keep their types; past 64 bits, zeros and underflow are doubles.
  auto doc = ParseJson(R"([-5,7,18446744073709551616,0e-74,1e-400,-1e-400])");
  ASSERT_TRUE(doc.ok());
  const rapidjson::Value& a = *doc.value();
  EXPECT_TRUE(a[0].IsInt());
  EXPECT_EQ(a[0].GetInt(), -5);
  EXPECT_TRUE(a[1].IsUint());
  EXPECT_TRUE(a[2].IsDouble());
  EXPECT_EQ(a[2].GetDouble(), 18446744073709551616.0);
  EXPECT_EQ(a[3].GetDouble(), 0.0);
  EXPECT_EQ(a[4].GetDouble(), 0.0);
  EXPECT_EQ(a[5].GetDouble(), 0.0);
  EXPECT_FALSE(ParseJson("[1e400]").ok());
  EXPECT_FALSE(ParseJson("[-1e400]").ok());
}

// Found by fuzz/client_responses_fuzzer on the client's side: a lone
// surrogate escape became bytes no JSON reader takes back.
TEST(ParseJson, RefusesLoneSurrogateEscapes) {
  for (const char* text : {R"({"x":"\udc00"})", R"({"\udfff":1})"}) {
    auto doc = ParseJson(text);
    ASSERT_FALSE(doc.ok()) << text;
    EXPECT_NE(doc.status().message().find("UTF-8"), std::string::npos) << doc.status().message();
  }
  EXPECT_FALSE(ParseJson(R"({"x":"a\ud800b"})").ok());  // RapidJSON refuses a lone high one itself
  EXPECT_TRUE(ParseJson(R"({"x":"\ud83d\ude00 \u00e9"})").ok());  // a pair, and a plain escape
}

// Found by fuzz/coordinator_requests_fuzzer: with "l" twice, a definition's
// canonical text (keys sorted) came out in either order.
TEST(ParseJson, RefusesAKeyThatRepeatsInAnObject) {
  auto doc = ParseJson(R"({"input":{"l":1,"m":2,"l":3}})");
  ASSERT_FALSE(doc.ok());
  EXPECT_NE(doc.status().message().find("repeats"), std::string::npos) << doc.status().message();
  EXPECT_TRUE(ParseJson(R"({"a":{"l":1},"b":{"l":1},"l":[{"l":1},{"l":2}]})").ok());  // same key, other objects
}

}  // namespace
}  // namespace scimesh::coordinator

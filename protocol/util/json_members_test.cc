// Unit tests for one member list read and written (json_members.h).
#include "protocol/util/json_members.h"

#include <gtest/gtest.h>

namespace scimesh {
namespace {

struct Thing {
  std::string name;
  int64_t count = 0;
  std::optional<std::string> note;
  std::optional<int64_t> limit;
  std::string token;
  std::vector<Thing> parts;
};

Status NoSpaces(std::string_view value, std::string_view field) {
  if (value.find(' ') == std::string_view::npos) return Status::Ok();
  return Status::InvalidField(std::string(field), "has a space");
}

// Recursive through `parts`: the lambda names itself through a function.
void ThingMembersOf(MemberReader& m, Thing& t);
void ThingMembersOf(MemberWriter& m, const Thing& t);

constexpr auto kThingMembers = [](auto& m, auto& t) { ThingMembersOf(m, t); };

template <typename M, typename T>
void ListThing(M& m, T& t) {
  m.String("name", t.name, NoSpaces);
  m.IntIn("count", t.count, 0, 10);
  m.OptString("note", t.note);                      // unset: null
  m.OptIntIn("limit", t.limit, 1, 5, Unset::kOmit);  // unset: not written
  m.StringOrEmpty("token", t.token, 1, 8);
  m.OptObjects("parts", t.parts, kThingMembers, 2);
  m.Check([&](const auto& o) {
    if (t.limit && *t.limit > t.count + 2) return Status::InvalidField(o.FieldPath("limit"), "is past count + 2");
    return Status::Ok();
  });
}
void ThingMembersOf(MemberReader& m, Thing& t) { ListThing(m, t); }
void ThingMembersOf(MemberWriter& m, const Thing& t) { ListThing(m, t); }

Result<Thing> Parse(std::string_view text) { return ParseMembers<Thing>(text, "thing", {}, kThingMembers); }

TEST(JsonMembersTest, WritesTheListInOrderAndReadsItBack) {
  Thing t{"a", 3, std::nullopt, 2, "", {Thing{"b", 1, "n", std::nullopt, "tk", {}}}};
  const std::string text = MembersText(t, kThingMembers);
  EXPECT_EQ(text,
            R"({"name":"a","count":3,"note":null,"limit":2,"parts":[{"name":"b","count":1,"note":"n","token":"tk",)"
            R"("parts":[]}]})");
  auto back = Parse(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(MembersText(*back, kThingMembers), text);
}

TEST(JsonMembersTest, EachRuleRefusesWithTheFieldsPath) {
  const struct {
    const char* text;
    const char* message;
  } cases[] = {
      {R"({"count":1})", "name: is required"},
      {R"({"name":"a b","count":1})", "name: has a space"},
      {R"({"name":"a","count":11})", "count: must be an integer from 0 to 10"},
      {R"({"name":"a","count":1,"limit":9})", "limit: must be an integer from 1 to 5"},
      {R"({"name":"a","count":1,"token":"123456789"})", "token: must be 1 to 8 characters"},
      {R"({"name":"a","count":0,"limit":3,"parts":[]})", "limit: is past count + 2"},
      {R"({"name":"a","count":1,"parts":[{"name":"x y","count":1}]})", "parts[0].name: has a space"},
      {R"({"name":"a","count":1,"parts":[{},{},{}]})", "parts: "},
  };
  for (const auto& c : cases) {
    auto r = Parse(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.status().message().find(c.message), std::string::npos) << c.text << ": " << r.status().ToString();
  }
}

// Attack: a hostile text with several faults. The first refusal is the one
// reported, and no later rule that passes turns it back into success.
TEST(JsonMembersTest, TheFirstRefusalIsKeptWhateverFollows) {
  auto r = Parse(R"({"name":"a b","count":99,"token":"ok","limit":1})");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("name: has a space"), std::string::npos) << r.status().ToString();
}

TEST(JsonMembersTest, AbsentOptionalsTakeTheirDefaults) {
  auto r = Parse(R"({"name":"a","count":1,"note":null})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->note);
  EXPECT_FALSE(r->limit);
  EXPECT_EQ(r->token, "");
  EXPECT_TRUE(r->parts.empty());
}

}  // namespace
}  // namespace scimesh

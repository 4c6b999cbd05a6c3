// The demand answer's JSON: every field survives a round trip, null stays
// null, and a reply the client cannot trust (malformed, a bad name, a count
// out of range, more groups than the bound) is refused naming the field.
#include <gtest/gtest.h>

#include "protocol/wire/wire_json.h"
#include "protocol/wire/wire_limits.h"

namespace scimesh {
namespace {

DemandGroup Group(const std::string& step_id) {
  DemandGroup g;
  g.workflow = "wf";
  g.version = "2";
  g.step_id = step_id;
  g.resources = Resources{2, 4, 1, 1};
  g.walltime_s = 600;
  g.runnable = 3;
  g.backing_off = 1;
  g.waiting = 5;
  g.running = 2;
  g.live_workers = 1;
  return g;
}

TEST(DemandJson, EveryFieldSurvivesARoundTrip) {
  QueuedDemand d;
  d.groups.push_back(Group("solve"));
  d.groups[0].claimable_by_live_workers = 2;
  d.groups.push_back(Group("big"));
  d.groups[1].unfittable = UnfittableView{"needs 3 nodes, largest offer 2", 1};
  d.more = true;
  d.at = "2026-11-29T08:00:30.000Z";
  auto back = ParseQueuedDemand(SerializeQueuedDemand(d));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->groups.size(), 2u);
  const DemandGroup& a = back->groups[0];
  EXPECT_EQ(a.step_id, "solve");
  EXPECT_EQ(a.resources, (Resources{2, 4, 1, 1}));
  EXPECT_EQ(a.walltime_s, 600);
  EXPECT_EQ(a.runnable, 3);
  EXPECT_EQ(a.backing_off, 1);
  EXPECT_EQ(a.waiting, 5);
  EXPECT_EQ(a.running, 2);
  EXPECT_EQ(a.live_workers, 1);
  EXPECT_EQ(a.claimable_by_live_workers, 2);
  EXPECT_FALSE(a.unfittable);
  const DemandGroup& b = back->groups[1];
  EXPECT_FALSE(b.claimable_by_live_workers) << "null: a live worker of unknown size";
  ASSERT_TRUE(b.unfittable);
  EXPECT_EQ(b.unfittable->reason, "needs 3 nodes, largest offer 2");
  EXPECT_TRUE(back->more);
  EXPECT_EQ(back->at, d.at);
}

std::string OneGroupWith(const std::string& member) {
  return R"({"groups":[{"workflow":"wf","version":"1","step_id":"s",)"
         R"("resources":{"nodes":1,"ranks_per_node":1,"cpus_per_rank":1,"gpus_per_rank":0},"walltime_s":60,)"
         R"("runnable":1,"backing_off":0,"waiting":0,"running":0,"live_workers":0,)"
         R"("claimable_by_live_workers":null,"unfittable":null)" +
         (member.empty() ? "" : "," + member) + R"(}],"more":false,"at":"x"})";
}

TEST(DemandJson, AnUntrustworthyReplyIsRefusedNamingTheField) {
  ASSERT_TRUE(ParseQueuedDemand(OneGroupWith(R"("extra":1)")).ok()) << "unknown members are ignored";
  const std::pair<std::string, std::string> cases[] = {
      {R"("runnable":-1)", "groups[0].runnable"},
      {R"("waiting":2147483648)", "groups[0].waiting"},
      {R"("step_id":"..")", "groups[0].step_id"},
      {R"("workflow":"a/b")", "groups[0].workflow"},
      {R"("claimable_by_live_workers":"2")", "groups[0].claimable_by_live_workers"},
  };
  for (const auto& [member, field] : cases) {
    // A repeated key is refused too, so replace by writing the member first.
    std::string text = OneGroupWith("");
    const std::string name = member.substr(0, member.find(':') + 1);
    const size_t at = text.find(name);
    ASSERT_NE(at, std::string::npos) << name;
    const size_t end = text.find_first_of(",}", text.find(':', at));
    text.replace(at, end - at, member);
    auto r = ParseQueuedDemand(text);
    ASSERT_FALSE(r.ok()) << member;
    EXPECT_NE(r.status().ToString().find(field), std::string::npos) << member << ": " << r.status().ToString();
  }
  EXPECT_FALSE(ParseQueuedDemand(R"({"groups":[)").ok()) << "malformed";
  EXPECT_FALSE(ParseQueuedDemand(R"({"groups":{},"more":false,"at":"x"})").ok()) << "groups not an array";
  EXPECT_FALSE(ParseQueuedDemand(R"({"groups":[],"at":"x"})").ok()) << "no more";
}

TEST(DemandJson, MoreGroupsThanTheBoundAreRefused) {
  QueuedDemand d;
  d.at = "x";
  for (size_t i = 0; i < kMaxDemandGroups; ++i) d.groups.push_back(Group("s" + std::to_string(i)));
  EXPECT_TRUE(ParseQueuedDemand(SerializeQueuedDemand(d)).ok()) << "exactly the bound";
  d.groups.push_back(Group("one-more"));
  auto r = ParseQueuedDemand(SerializeQueuedDemand(d));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().ToString().find("groups"), std::string::npos) << r.status().ToString();
}

}  // namespace
}  // namespace scimesh

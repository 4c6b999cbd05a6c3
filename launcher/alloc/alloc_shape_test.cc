// Unit tests for allocation shapes: parsing, SLURM's time format, and what
// one allocation of a shape runs.
#include "launcher/alloc/alloc_shape.h"

#include <string>

#include <gtest/gtest.h>

namespace scimesh::alloc {
namespace {

TEST(ParseSlurmTimeTest, ReadsEveryFormat) {
  const std::pair<const char*, int64_t> cases[] = {
      {"0", 0},         {"5", 300},           {"0:00", 0},          {"1:30", 90},        {"59:59", 3599},
      {"1:02:03", 3723}, {"100:00:00", 360000}, {"1-0", 86400},     {"2-3", 183600},     {"1-02:03", 93780},
      {"1-02:03:04", 93784}, {"0-00:00:01", 1}, {"365-00:00:00", 365 * 86400},
  };
  for (const auto& [text, seconds] : cases) {
    auto got = ParseSlurmTime(text);
    ASSERT_TRUE(got.ok()) << text << ": " << got.status().ToString();
    EXPECT_EQ(*got, seconds) << text;
  }
}

TEST(ParseSlurmTimeTest, RefusesWhatIsNotATime) {
  for (const char* text : {"", "UNLIMITED", "INVALID", "NOT_SET", "-5", "1:-2", "1:2:3:4", "1-2:3:4:5", "1-", "-1-0",
                           "1-2-3", ":", "1:", " 5", "5 ", "+5", "1.5", "366-00:00:00", "abc"}) {
    auto got = ParseSlurmTime(text);
    EXPECT_EQ(got.status().code(), Code::kInvalidArgument) << "'" << text << "'";
  }
}

TEST(FormatSlurmTimeTest, WritesHoursOrDays) {
  const std::pair<int64_t, const char*> cases[] = {
      {0, "00:00:00"},       {59, "00:00:59"},          {3723, "01:02:03"},   {86399, "23:59:59"},
      {86400, "1-00:00:00"}, {93784, "1-02:03:04"},     {-5, "00:00:00"},     {30 * 86400, "30-00:00:00"},
  };
  for (const auto& [seconds, text] : cases) EXPECT_EQ(FormatSlurmTime(seconds), text) << seconds;
}

TEST(FormatSlurmTimeTest, ParsesBackToTheSameSeconds) {
  for (int64_t seconds : {60, 3600, 3661, 86400, 90061, 200 * 86400 + 1}) {
    auto back = ParseSlurmTime(FormatSlurmTime(seconds));
    ASSERT_TRUE(back.ok()) << seconds;
    EXPECT_EQ(*back, seconds);
  }
}

TEST(ParseShapeTest, ReadsNodesTimeCoresAndGpusInAnyOrder) {
  struct Case {
    const char* text;
    Shape shape;
  };
  const Case cases[] = {
      {"nodes=2,time=1:00:00", Shape{2, 3600, 0, 0}},
      {"time=30,nodes=1", Shape{1, 1800, 0, 0}},
      {"nodes=4,time=1-00:00:00,cores=64,gpus=4", Shape{4, 86400, 64, 4}},
      {"gpus=1,cores=8,time=1:00,nodes=10000", Shape{10000, 60, 8, 1}},
  };
  for (const auto& c : cases) {
    auto got = ParseShape(c.text);
    ASSERT_TRUE(got.ok()) << c.text << ": " << got.status().ToString();
    EXPECT_EQ(*got, c.shape) << c.text;
  }
}

TEST(ParseShapeTest, RefusesSayingWhy) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "unknown key"},
      {"nodes=2", "needs nodes= and time="},
      {"time=1:00:00", "needs nodes= and time="},
      {"nodes=0,time=1:00:00", "nodes '0'"},
      {"nodes=10001,time=1:00:00", "nodes '10001'"},
      {"nodes=x,time=1:00:00", "nodes 'x'"},
      {"nodes,time=1:00:00", "nodes ''"},
      {"nodes=1,time=0:59", "under a minute"},
      {"nodes=1,time=UNLIMITED", "not SLURM's"},
      {"nodes=1,time=1:00:00,cores=-1", "cores '-1'"},
      {"nodes=1,time=1:00:00,gpus=1025", "gpus '1025'"},
      {"nodes=1,time=1:00:00,mem=4G", "unknown key 'mem'"},
      {"nodes=1,,time=1:00:00", "unknown key ''"},
  };
  for (const auto& [text, why] : cases) {
    auto got = ParseShape(text);
    EXPECT_EQ(got.status().code(), Code::kInvalidArgument) << text;
    EXPECT_NE(got.status().message().find(why), std::string::npos) << text << ": " << got.status().message();
  }
}

TEST(ShapeTextTest, SaysNodesTimeAndWhatANodeGives) {
  EXPECT_EQ(ShapeText(Shape{1, 1800, 0, 0}), "1 node x 00:30:00");
  EXPECT_EQ(ShapeText(Shape{2, 90000, 8, 1}), "2 nodes x 1-01:00:00 x 8 cores x 1 gpus");
}

Resources Needs(int64_t nodes, int64_t ranks_per_node, int64_t cpus_per_rank, int64_t gpus_per_rank) {
  return Resources{nodes, ranks_per_node, cpus_per_rank, gpus_per_rank};
}

TEST(WhyNotFitsTest, EmptyWhenTheStepFits) {
  EXPECT_EQ(WhyNotFits(Shape{2, 3600, 8, 2}, Needs(2, 4, 2, 0), 3480, 120), "");
  EXPECT_EQ(WhyNotFits(Shape{1, 3600, 0, 0}, Needs(1, 64, 1, 0), 600, 120), "") << "cores not known: not checked";
  EXPECT_EQ(WhyNotFits(Shape{1, 3600, 8, 2}, Needs(1, 2, 1, 1), 600, 120), "");
}

TEST(WhyNotFitsTest, SaysWhatIsMissing) {
  EXPECT_EQ(WhyNotFits(Shape{2, 3600, 8, 0}, Needs(4, 1, 1, 0), 600, 120), "needs 4 nodes, the shape has 2");
  EXPECT_EQ(WhyNotFits(Shape{2, 3600, 8, 0}, Needs(1, 4, 4, 0), 600, 120),
            "needs 16 cores per node, the shape has 8");
  EXPECT_EQ(WhyNotFits(Shape{2, 3600, 8, 0}, Needs(1, 2, 1, 1), 600, 120), "needs 2 gpus per node, the shape has 0");
  EXPECT_EQ(WhyNotFits(Shape{2, 3600, 8, 0}, Needs(1, 1, 1, 0), 3481, 120),
            "needs 3481 s, the shape runs steps for 3480 s (time 01:00:00 less the 120 s drain margin)");
  EXPECT_EQ(WhyNotFits(Shape{1, 60, 0, 0}, Needs(1, 1, 1, 0), 10, 120),
            "needs 10 s, the shape runs steps for 0 s (time 00:01:00 less the 120 s drain margin)");
}

TEST(StepsAtOnceTest, CountsByCoresGpusAndNodes) {
  struct Case {
    Shape shape;
    Resources needs;
    int64_t at_once;
  };
  const Case cases[] = {
      {Shape{1, 3600, 8, 0}, Needs(1, 1, 1, 0), 8},
      {Shape{1, 3600, 8, 0}, Needs(1, 2, 2, 0), 2},
      {Shape{1, 3600, 8, 0}, Needs(1, 3, 1, 0), 2},   // 8 / 3, rounded down
      {Shape{4, 3600, 8, 0}, Needs(2, 8, 1, 0), 2},   // two 2-node steps
      {Shape{3, 3600, 8, 0}, Needs(2, 8, 1, 0), 1},   // the third node is idle
      {Shape{2, 3600, 0, 0}, Needs(1, 4, 1, 0), 2},   // cores not known: one per node
      {Shape{1, 3600, 64, 4}, Needs(1, 1, 1, 1), 4},  // GPUs bound it
      {Shape{1, 3600, 64, 4}, Needs(1, 2, 1, 1), 2},
      {Shape{1, 3600, 8, 0}, Needs(1, 1, 1, 1), 0},   // no GPUs
      {Shape{1, 3600, 8, 0}, Needs(1, 16, 1, 0), 0},  // too many cores
      {Shape{1, 3600, 8, 0}, Needs(2, 1, 1, 0), 0},   // too many nodes
  };
  for (const auto& c : cases) {
    EXPECT_EQ(StepsAtOnce(c.shape, c.needs), c.at_once) << ShapeText(c.shape) << " nodes " << c.needs.nodes
                                                        << " ranks " << c.needs.ranks_per_node << " cpus "
                                                        << c.needs.cpus_per_rank << " gpus " << c.needs.gpus_per_rank;
  }
}

}  // namespace
}  // namespace scimesh::alloc

// Unit tests for "0-3,8" index lists and hex masks.
#include "protocol/util/index_list.h"

#include <gtest/gtest.h>

namespace scimesh {
namespace {

TEST(IndexListTest, ParsesSinglesAndRangesSorted) {
  auto v = ParseIndexList("8,0-3,10-11");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(*ParseIndexList("5"), std::vector<int>{5});
}

TEST(IndexListTest, RefusesMalformedInput) {
  for (const char* bad : {"", ",", "1,", ",1", "1-", "-1", "3-1", "a", "1-2-3", "1,1", "0-3,2", " 1", "1 "}) {
    auto v = ParseIndexList(bad);
    EXPECT_FALSE(v.ok()) << "'" << bad << "'";
    EXPECT_EQ(v.status().code(), Code::kInvalidArgument);
  }
  EXPECT_FALSE(ParseIndexList("0-100", 50).ok());
  EXPECT_FALSE(ParseIndexList("0-99999", 1 << 20, 1000).ok());
  EXPECT_EQ(ParseIndexList("3-1").status().message(), "range '3-1' ends before it starts");
}

TEST(IndexListTest, FormatsRangesAndMasks) {
  EXPECT_EQ(FormatIndexList({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(FormatIndexList({}), "");
  EXPECT_EQ(FormatIndexList({4}), "4");
  EXPECT_EQ(FormatHexMask({0, 1, 2, 3, 8}), "0x10f");
  EXPECT_EQ(FormatHexMask({}), "0x0");
  EXPECT_EQ(FormatHexMask({64}), "0x10000000000000000");
  EXPECT_EQ(*ParseIndexList(FormatIndexList({1, 2, 3, 7, 9, 10})), (std::vector<int>{1, 2, 3, 7, 9, 10}));
}

TEST(IndexListTest, ParseIntegerChecksRangeAndGarbage) {
  EXPECT_EQ(*ParseInteger("42", 0, 100), 42);
  EXPECT_FALSE(ParseInteger("101", 0, 100).ok());
  EXPECT_FALSE(ParseInteger("4x", 0, 100).ok());
  EXPECT_FALSE(ParseInteger("", 0, 100).ok());
  EXPECT_FALSE(ParseInteger("99999999999999999999999", 0, 100).ok());
}

}  // namespace
}  // namespace scimesh

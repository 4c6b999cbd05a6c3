// Unit tests for Status and Result<T>.
#include "protocol/util/status.h"

#include <gtest/gtest.h>

namespace scimesh {
namespace {

TEST(StatusTest, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "ok");
}

TEST(StatusTest, FactoryCarriesCodeAndMessage) {
  Status s = Status::InvalidArgument("field 'max' must be 1..64");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.ToString(), "invalid_argument: field 'max' must be 1..64");
}

TEST(StatusTest, WithContextPrefixesMessageAndKeepsCode) {
  Status s = Status::Io("permission denied").WithContext("write lease state");
  EXPECT_EQ(s.code(), Code::kIo);
  EXPECT_EQ(s.message(), "write lease state: permission denied");
  EXPECT_TRUE(Status::Ok().WithContext("ignored").ok());
}

Result<int> ParsePositive(int v) {
  if (v <= 0) return Status::InvalidArgument("not positive");
  return v;
}

Status Chain(int v) {
  SCIMESH_RETURN_IF_ERROR(ParsePositive(v).status());
  return Status::Ok();
}

TEST(ResultTest, HoldsValueOrStatus) {
  Result<int> good = ParsePositive(3);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 3);
  EXPECT_TRUE(good.status().ok());

  Result<int> bad = ParsePositive(-1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(bad.value_or(7), 7);
}

TEST(ResultTest, ReturnIfErrorPropagates) {
  EXPECT_TRUE(Chain(1).ok());
  EXPECT_EQ(Chain(0).code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace scimesh

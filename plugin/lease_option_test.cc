// --scimesh-lease values.
#include "plugin/lease_option.h"

#include <gtest/gtest.h>

namespace scimesh::spank {
namespace {

TEST(LeaseOption, AbsoluteDirectoryIsNormalised) {
  auto t = ParseLeaseOption("/spool//r_1/solve/./1/");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->attempt_dir, "/spool/r_1/solve/1");
  EXPECT_TRUE(t->lease_id.empty());
}

TEST(LeaseOption, LeaseId) {
  auto t = ParseLeaseOption("l_0c8e51d2a4b94f17");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->lease_id, "l_0c8e51d2a4b94f17");
  EXPECT_TRUE(t->attempt_dir.empty());
}

TEST(LeaseOption, RefusesWithAReason) {
  auto rel = ParseLeaseOption("spool/r/1");
  ASSERT_FALSE(rel.ok());
  EXPECT_NE(rel.status().message().find("absolute"), std::string::npos);
  EXPECT_FALSE(ParseLeaseOption("").ok());
  EXPECT_FALSE(ParseLeaseOption("/").ok());
  EXPECT_FALSE(ParseLeaseOption("/spool/../etc").ok());
  EXPECT_FALSE(ParseLeaseOption("/spool/a\nb").ok());
  EXPECT_FALSE(ParseLeaseOption("l_XYZ").ok());
  EXPECT_FALSE(ParseLeaseOption("/" + std::string(5000, 'a')).ok());
}

TEST(LeaseOption, LeaseIdTakesTheDirectoryFromTheEnvironment) {
  auto t = ResolveLeaseTarget(ParseLeaseOption("l_0c8e51d2a4b94f17").value(), "/spool/r/s/1");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->attempt_dir, "/spool/r/s/1");
  EXPECT_FALSE(ResolveLeaseTarget(ParseLeaseOption("l_0c8e51d2a4b94f17").value(), "").ok());
  EXPECT_FALSE(ResolveLeaseTarget(ParseLeaseOption("l_0c8e51d2a4b94f17").value(), "relative").ok());
  // A directory target ignores the environment.
  EXPECT_EQ(ResolveLeaseTarget(ParseLeaseOption("/x").value(), "/y")->attempt_dir, "/x");
}

}  // namespace
}  // namespace scimesh::spank

#include "protocol/attempt/rank_environment.h"

#include <gtest/gtest.h>

namespace scimesh {
namespace {

std::string Find(const std::vector<RankVariable>& env, const std::string& name, bool* overrides = nullptr) {
  for (const auto& v : env) {
    if (v.name != name) continue;
    if (overrides != nullptr) *overrides = v.overrides;
    return v.value;
  }
  return "<unset>";
}

TEST(RankEnvironment, ThreadsAndPlacesFollowThePusAndGiveWayToTheUser) {
  auto env = RankEnvironment({2, 3, 7}, {});
  bool overrides = true;
  EXPECT_EQ(Find(env, "OMP_NUM_THREADS", &overrides), "3");
  EXPECT_FALSE(overrides);
  EXPECT_EQ(Find(env, "OMP_PLACES"), "{2},{3},{7}");
  EXPECT_EQ(Find(env, "OMP_PROC_BIND"), "close");
}

TEST(RankEnvironment, WithoutPusOneThreadAndNoPlaces) {
  auto env = RankEnvironment({}, {});
  EXPECT_EQ(Find(env, "OMP_NUM_THREADS"), "1");
  EXPECT_EQ(Find(env, "OMP_PLACES"), "<unset>");
}

TEST(RankEnvironment, GpuVisibilityIsTheLaunchersAndEmptyMeansNone) {
  bool overrides = false;
  auto env = RankEnvironment({0}, {1, 0});
  EXPECT_EQ(Find(env, "CUDA_VISIBLE_DEVICES", &overrides), "1,0");
  EXPECT_TRUE(overrides);
  EXPECT_EQ(Find(env, "ROCR_VISIBLE_DEVICES"), "1,0");
  EXPECT_EQ(Find(env, "ZE_AFFINITY_MASK"), "1,0");
  EXPECT_EQ(Find(RankEnvironment({0}, {}), "CUDA_VISIBLE_DEVICES"), "");
}

}  // namespace
}  // namespace scimesh

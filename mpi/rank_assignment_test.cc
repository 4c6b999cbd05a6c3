// Unit tests for placement.json parsing, rank identity and cpu lists.
#include "mpi/rank_assignment.h"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace scimesh::mpi {
namespace {

constexpr char kPlacement[] = R"({"ranks":[
  {"rank":0,"node":"n1","cpus":[0,1],"gpus":[]},
  {"rank":1,"node":"n1","cpus":[2,3],"gpus":[1]},
  {"rank":2,"node":"n2","cpus":[0,1],"gpus":[0]}]})";

TEST(RankAssignmentTest, FindsTheRanksEntry) {
  auto a = ParseRankAssignment(kPlacement, 1);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(a->has_value());
  EXPECT_EQ((*a)->node, "n1");
  EXPECT_EQ((*a)->cpus, (std::vector<unsigned>{2, 3}));
  EXPECT_EQ((*a)->gpus, (std::vector<int>{1}));
}

TEST(RankAssignmentTest, AbsentRankIsNotAnError) {
  auto a = ParseRankAssignment(kPlacement, 7);
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(a->has_value());
}

TEST(RankAssignmentTest, RejectsMalformedFiles) {
  EXPECT_EQ(ParseRankAssignment("not json", 0).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ParseRankAssignment(R"({"ranks":{}})", 0).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ParseRankAssignment(R"({"ranks":[{"rank":0,"cpus":[-1]}]})", 0).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(ParseRankAssignment(R"({"ranks":[{"cpus":[1]}]})", 0).status().code(), Code::kInvalidArgument);
}

TEST(RankAssignmentTest, RankFromTheLaunchersEnvironment) {
  unsetenv("SLURM_PROCID");
  unsetenv("OMPI_COMM_WORLD_RANK");
  unsetenv("PMIX_RANK");
  unsetenv("PMI_RANK");
  EXPECT_FALSE(GlobalRankFromEnv().has_value());
  setenv("PMIX_RANK", "5", 1);
  EXPECT_EQ(GlobalRankFromEnv(), 5);
  setenv("SLURM_PROCID", "3", 1);  // srun's own variable wins
  EXPECT_EQ(GlobalRankFromEnv(), 3);
  setenv("SLURM_PROCID", "x3", 1);  // garbage is skipped, not trusted
  EXPECT_EQ(GlobalRankFromEnv(), 5);
  unsetenv("SLURM_PROCID");
  unsetenv("PMIX_RANK");
}

}  // namespace
}  // namespace scimesh::mpi

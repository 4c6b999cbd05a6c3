// Tests of the tenancy rules: globs, worker_id, workflow and run ownership.
#include "coordinator/tenancy.h"

#include <gtest/gtest.h>

namespace scimesh::coordinator {
namespace {

TEST(Glob, MatchesWholeNamesWithStarAndQuestionMark) {
  EXPECT_TRUE(GlobMatches("*", "anything"));
  EXPECT_TRUE(GlobMatches("chem-*", "chem-"));
  EXPECT_TRUE(GlobMatches("chem-*", "chem-relax"));
  EXPECT_FALSE(GlobMatches("chem-*", "bio-chem-relax"));
  EXPECT_TRUE(GlobMatches("*-relax", "chem-relax"));
  EXPECT_TRUE(GlobMatches("qc?", "qc1"));
  EXPECT_FALSE(GlobMatches("qc?", "qc"));
  EXPECT_FALSE(GlobMatches("qc?", "qc12"));
  EXPECT_TRUE(GlobMatches("a*b*c", "axxbyyc"));
  EXPECT_FALSE(GlobMatches("a*b*c", "axxbyy"));
  EXPECT_FALSE(GlobMatches("wf", "wf2"));
  EXPECT_FALSE(GlobMatches("", "wf"));
}

TEST(Glob, ManyStarsStayFast) {
  // Backtracking matchers take exponential time here; this one is linear.
  std::string glob(30, '*');
  glob += "b";
  EXPECT_FALSE(GlobMatches(glob, std::string(64, 'a')));
}

TEST(Tenancy, AWorkerIdBelongsToTheKeyThatRegisteredItFirst) {
  KeyIdentity a{"a", kScopeWorker}, b{"b", kScopeWorker}, admin{"root", kScopeAdmin};
  EXPECT_TRUE(MayActAsWorker(b, std::nullopt));
  EXPECT_TRUE(MayActAsWorker(a, "a"));
  EXPECT_FALSE(MayActAsWorker(b, "a"));
  EXPECT_TRUE(MayActAsWorker(admin, "a"));
}

TEST(Tenancy, WithoutGlobsAKeyRegistersTheWorkflowsItHadFirst) {
  KeyIdentity a{"a", kScopeWorker}, b{"b", kScopeWorker};
  EXPECT_TRUE(MayRegisterWorkflow(b, "wf", std::nullopt));
  EXPECT_TRUE(MayRegisterWorkflow(a, "wf", "a"));
  EXPECT_FALSE(MayRegisterWorkflow(b, "wf", "a"));
}

TEST(Tenancy, GlobsDecideWhateverTheOwner) {
  KeyIdentity chem{"chem", kScopeWorker, {"chem-*", "qc"}};
  EXPECT_TRUE(MayRegisterWorkflow(chem, "chem-relax", "someone-else"));
  EXPECT_TRUE(MayRegisterWorkflow(chem, "qc", std::nullopt));
  // Not even a workflow nobody registered yet: the globs are the whole grant.
  EXPECT_FALSE(MayRegisterWorkflow(chem, "bio", std::nullopt));
  EXPECT_FALSE(MayRegisterWorkflow(chem, "bio", "chem"));
  EXPECT_TRUE(MayRegisterWorkflow(KeyIdentity{"root", kScopeAdmin}, "bio", "chem"));
}

TEST(Tenancy, RunsAreReadByTheirKeyAdminAndReadKeysAndCancelledByTheirKeyAndAdmin) {
  KeyIdentity alice{"alice", kScopeExecute}, bob{"bob", kScopeExecute};
  KeyIdentity dash{"dash", kScopeRead}, root{"root", kScopeAdmin};
  EXPECT_TRUE(MayReadRun(alice, "alice"));
  EXPECT_FALSE(MayReadRun(bob, "alice"));
  EXPECT_TRUE(MayReadRun(dash, "alice"));
  EXPECT_TRUE(MayReadRun(root, "alice"));
  EXPECT_TRUE(MayCancelRun(alice, "alice"));
  EXPECT_FALSE(MayCancelRun(bob, "alice"));
  EXPECT_FALSE(MayCancelRun(dash, "alice"));
  EXPECT_TRUE(MayCancelRun(root, "alice"));
  // A run from before runs had owners: admin and read keys only.
  EXPECT_FALSE(MayReadRun(alice, std::nullopt));
  EXPECT_TRUE(MayReadRun(dash, std::nullopt));
  EXPECT_FALSE(MayCancelRun(alice, std::nullopt));
  // A worker key with the owner's name is still not an execute key.
  EXPECT_FALSE(MayReadRun(KeyIdentity{"alice", kScopeWorker}, "alice"));
  // The run list: admin and read keys list every key's runs, others their own.
  EXPECT_TRUE(MayReadRunOfAnyOwner(dash));
  EXPECT_TRUE(MayReadRunOfAnyOwner(root));
  EXPECT_FALSE(MayReadRunOfAnyOwner(alice));
}

}  // namespace
}  // namespace scimesh::coordinator

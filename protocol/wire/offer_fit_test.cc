// The wording of "no offer can take this step", dimension by dimension.
#include "protocol/wire/offer_fit.h"

#include <gtest/gtest.h>

namespace scimesh {
namespace {

FreeCapacity Offer(std::vector<int64_t> cpus, int64_t walltime_s, int64_t gpus = 0) {
  FreeCapacity f;
  for (size_t i = 0; i < cpus.size(); ++i) f.nodes.push_back({"n" + std::to_string(i + 1), cpus[i], gpus});
  f.walltime_s = walltime_s;
  return f;
}

Resources Needs(int64_t nodes, int64_t ranks_per_node = 1, int64_t cpus_per_rank = 1, int64_t gpus_per_rank = 0) {
  return Resources{nodes, ranks_per_node, cpus_per_rank, gpus_per_rank};
}

TEST(WhyNoOfferFits, AStepThatFitsOneOfferHasNoReason) {
  EXPECT_FALSE(WhyNoOfferFits(Needs(3), 60, {Offer({4, 4}, 3600), Offer({1, 1, 1}, 3600)}));
  EXPECT_FALSE(WhyNoOfferFits(Needs(2, 2, 2), 3600, {Offer({4, 4}, 3600)}));  // exactly full
}

TEST(WhyNoOfferFits, NoOffersIsNoVerdict) { EXPECT_FALSE(WhyNoOfferFits(Needs(99), 60, {})); }

TEST(WhyNoOfferFits, TooManyNodesNamesTheLargestOffer) {
  EXPECT_EQ(WhyNoOfferFits(Needs(3), 60, {Offer({2, 2}, 3600), Offer({8}, 3600)}), "needs 3 nodes, largest offer 2");
}

TEST(WhyNoOfferFits, NodesTooSmallSayWhatEachNodeNeeds) {
  EXPECT_EQ(WhyNoOfferFits(Needs(2, 4, 2), 60, {Offer({8, 4}, 3600)}),
            "needs 2 nodes with 8 cpus each, largest offer 1 such node");
  EXPECT_EQ(WhyNoOfferFits(Needs(1, 1, 1, 1), 60, {Offer({8, 8}, 3600, 0)}),
            "needs 1 node with 1 cpu and 1 gpu each, largest offer 0 such nodes");
}

TEST(WhyNoOfferFits, TooLongNamesTheLongestWalltime) {
  EXPECT_EQ(WhyNoOfferFits(Needs(1), 7200, {Offer({4}, 3480), Offer({4}, 600)}),
            "needs 7200 s of walltime, largest offer 3480 s");
  EXPECT_EQ(WhyNoOfferFits(Needs(3), 7200, {Offer({4}, 60)}),
            "needs 3 nodes, largest offer 1; needs 7200 s of walltime, largest offer 60 s");
}

TEST(WhyNoOfferFits, EachDimensionOfferedButNeverTogether) {
  EXPECT_EQ(WhyNoOfferFits(Needs(2), 600, {Offer({1, 1}, 60), Offer({1}, 3600)}),
            "needs 2 nodes with 1 cpu each for 600 s, and no single offer has both");
}

}  // namespace
}  // namespace scimesh

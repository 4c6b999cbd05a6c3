// Unit tests for SLURM environment strings, without SLURM.
#include "launcher/allocation/slurm_env.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

namespace scimesh::launcher {
namespace {

using Hosts = std::vector<std::string>;

TEST(HostListTest, ExpandsRangesListsAndPlainNames) {
  EXPECT_EQ(*ExpandHostList("n[1-3,5],gpu[01-02]"), (Hosts{"n1", "n2", "n3", "n5", "gpu01", "gpu02"}));
  EXPECT_EQ(*ExpandHostList("login"), Hosts{"login"});
  EXPECT_EQ(*ExpandHostList("a,b,c"), (Hosts{"a", "b", "c"}));
  EXPECT_EQ(*ExpandHostList("n[7]"), Hosts{"n7"});
  EXPECT_EQ(*ExpandHostList("node-[1-2].ib"), (Hosts{"node-1.ib", "node-2.ib"}));
}

TEST(HostListTest, KeepsZeroPaddingFromTheFirstNumber) {
  EXPECT_EQ(*ExpandHostList("n[08-11]"), (Hosts{"n08", "n09", "n10", "n11"}));
  EXPECT_EQ(*ExpandHostList("n[8-11]"), (Hosts{"n8", "n9", "n10", "n11"}));
  EXPECT_EQ(*ExpandHostList("c[098-101]"), (Hosts{"c098", "c099", "c100", "c101"}));
  EXPECT_EQ(*ExpandHostList("n[001-002,10]"), (Hosts{"n001", "n002", "n10"}));
}

TEST(HostListTest, SeveralBracketGroupsExpandAsAProduct) {
  EXPECT_EQ(*ExpandHostList("r[1-2]n[01-02]"), (Hosts{"r1n01", "r1n02", "r2n01", "r2n02"}));
  EXPECT_EQ(*ExpandHostList("rack[01-02]-n[1,3],login1"),
            (Hosts{"rack01-n1", "rack01-n3", "rack02-n1", "rack02-n3", "login1"}));
}

TEST(HostListTest, RefusesBadListsWithClearMessages) {
  for (const char* bad : {"", "n[1-3", "n1-3]", "n[[1-2]]", "n[]", "n[3-1]", "n[a-b]", "n[1-]", "a,,b", ",a", "a,",
                          "n[1,,2]", "n 1", "n[1-2],n2"}) {
    auto v = ExpandHostList(bad);
    EXPECT_FALSE(v.ok()) << "'" << bad << "'";
    EXPECT_EQ(v.status().code(), Code::kInvalidArgument) << bad;
  }
  EXPECT_EQ(ExpandHostList("n[3-1]").status().message(), "range '3-1' in host list item 'n[3-1]' ends before it starts");
  EXPECT_EQ(ExpandHostList("n[1-2],n2").status().message(), "host 'n2' appears twice in the host list");
  EXPECT_EQ(ExpandHostList("n[1-3").status().message(), "unbalanced '[' in host list 'n[1-3'");
  EXPECT_FALSE(ExpandHostList("n[1-100000]").ok());
  EXPECT_FALSE(ExpandHostList("a[1-300]b[1-300]", 65536).ok());
}

TEST(CpusPerNodeTest, ExpandsRepeats) {
  EXPECT_EQ(*ExpandCpusPerNode("2(x3),1", 4), (std::vector<int>{2, 2, 2, 1}));
  EXPECT_EQ(*ExpandCpusPerNode("64", 1), std::vector<int>{64});
  EXPECT_EQ(*ExpandCpusPerNode("36(x2),72,36(x1)", 4), (std::vector<int>{36, 36, 72, 36}));
}

TEST(CpusPerNodeTest, RefusesMalformedOrMismatchedCounts) {
  for (const char* bad : {"", "2(x3", "2(3)", "2(x0)", "(x2)", "0", "2,", "a", "2(xa)", "2(x2)x"}) {
    EXPECT_FALSE(ExpandCpusPerNode(bad, 2).ok()) << "'" << bad << "'";
  }
  EXPECT_EQ(ExpandCpusPerNode("2(x3),1", 3).status().message(),
            "cpus-per-node '2(x3),1' names more than the 3 nodes of the node list");
  EXPECT_EQ(ExpandCpusPerNode("2(x3)", 4).status().message(),
            "cpus-per-node '2(x3)' names 3 nodes but the node list has 4");
}

TEST(GpuCountTest, ParsesPlainAndTypedCounts) {
  EXPECT_EQ(*ParseGpuCount("4"), 4);
  EXPECT_EQ(*ParseGpuCount("a100:2"), 2);
  EXPECT_EQ(*ParseGpuCount("gpu:a100:8"), 8);
  EXPECT_FALSE(ParseGpuCount("a100").ok());
  EXPECT_FALSE(ParseGpuCount("").ok());
}

TEST(SlurmTimeTest, ParsesLocalTimeAndRefusesTheRest) {
  // Pin the time zone so the expected epoch is fixed.
  const char* old = std::getenv("TZ");
  std::string saved = old != nullptr ? old : "";
  setenv("TZ", "UTC", 1);
  tzset();
  auto t = ParseSlurmTime("2026-11-29T08:00:30");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(std::chrono::system_clock::to_time_t(*t), 1795939230);
  for (const char* bad : {"Unknown", "N/A", "NONE", "", "2026-11-29 08:00:30", "2026-13-01T00:00:00",
                          "2026-11-29T08:00", "2026-11-29T08:00:30Z"}) {
    EXPECT_FALSE(ParseSlurmTime(bad).ok()) << "'" << bad << "'";
  }
  if (old != nullptr) {
    setenv("TZ", saved.c_str(), 1);
  } else {
    unsetenv("TZ");
  }
  tzset();
}

}  // namespace
}  // namespace scimesh::launcher

// Unit tests of the convergence study arithmetic, table and output.
#include "examples/poisson/convergence.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <sstream>

namespace scimesh::poisson {
namespace {

// A solve output whose error is exactly c·h^p.
std::string Solve(int n, double c, double p, int iterations) {
  const double h = 1.0 / (n + 1);
  std::ostringstream s;
  s.precision(17);
  s << R"({"n":)" << n << R"(,"h":)" << h << R"(,"iterations":)" << iterations << R"(,"l2_error":)"
    << c * std::pow(h, p) << R"(,"converged":true})";
  return s.str();
}

TEST(ObservedOrderTest, RecoversTheExponentOfAPowerLaw) {
  EXPECT_NEAR(ObservedOrder(4e-2, 1e-2, 0.2, 0.1), 2.0, 1e-12);
  EXPECT_NEAR(ObservedOrder(8e-3, 1e-3, 0.1, 0.05), 3.0, 1e-12);
  EXPECT_NEAR(ObservedOrder(1.0, 1.0, 0.2, 0.1), 0.0, 1e-12);
  // A ratio of h that is not 2: h = 1/9 and 1/17.
  EXPECT_NEAR(ObservedOrder(std::pow(1.0 / 9, 2), std::pow(1.0 / 17, 2), 1.0 / 9, 1.0 / 17), 2.0, 1e-12);
}

TEST(ConvergenceRowsTest, SortsCoarsestFirstAndFillsOrders) {
  // Keys in no particular order; the fine solve has order 1.5 against the middle one.
  const double c = 0.7;
  const double e16 = c * std::pow(1.0 / 17, 2);
  const double e32 = e16 * std::pow((1.0 / 33) / (1.0 / 17), 1.5);
  std::ostringstream prev;
  prev.precision(17);
  prev << R"({"solve-32":{"n":32,"iterations":120,"l2_error":)" << e32 << R"(},"solve-8":)" << Solve(8, c, 2, 30)
       << R"(,"solve-16":)" << Solve(16, c, 2, 60) << "}";
  auto rows = ConvergenceRows(prev.str());
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0].step_id, "solve-8");
  EXPECT_EQ((*rows)[1].step_id, "solve-16");
  EXPECT_EQ((*rows)[2].step_id, "solve-32");
  EXPECT_FALSE((*rows)[0].observed_order.has_value());
  EXPECT_NEAR(*(*rows)[1].observed_order, 2.0, 1e-9);
  EXPECT_NEAR(*(*rows)[2].observed_order, 1.5, 1e-9);
  EXPECT_DOUBLE_EQ((*rows)[2].h, 1.0 / 33);  // derived from n when the output has no h
  EXPECT_EQ((*rows)[1].iterations, 60);
  EXPECT_DOUBLE_EQ((*rows)[1].l2_error, e16);
}

TEST(ConvergenceRowsTest, SkipsOutputsThatAreNotSolves) {
  auto rows = ConvergenceRows(R"({"mesh":{"cells":12},"a":)" + Solve(8, 1, 2, 5) + R"(,"b":)" + Solve(16, 1, 2, 9) +
                              R"(,"note":"text"})");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(rows->size(), 2u);
}

TEST(ConvergenceRowsTest, RefusesWhatCannotMakeAStudy) {
  EXPECT_EQ(ConvergenceRows("[1,2]").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ConvergenceRows("{not json").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ConvergenceRows("{}").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ConvergenceRows(R"({"a":)" + Solve(8, 1, 2, 5) + "}").status().code(), Code::kInvalidArgument);
  auto same = ConvergenceRows(R"({"a":)" + Solve(8, 1, 2, 5) + R"(,"b":)" + Solve(8, 2, 2, 5) + "}");
  EXPECT_EQ(same.status().code(), Code::kInvalidArgument);
  EXPECT_NE(same.status().message().find("same mesh size"), std::string::npos);
  auto zero = ConvergenceRows(R"({"a":)" + Solve(8, 1, 2, 5) + R"(,"b":{"n":16,"l2_error":0}})");
  EXPECT_EQ(zero.status().code(), Code::kInvalidArgument);
  auto unconverged =
      ConvergenceRows(R"({"a":)" + Solve(8, 1, 2, 5) + R"(,"b":{"n":16,"l2_error":0.01,"converged":false}})");
  EXPECT_EQ(unconverged.status().code(), Code::kInvalidArgument);
  EXPECT_NE(unconverged.status().message().find("'b' did not converge"), std::string::npos);
}

TEST(ConvergenceTableTest, OneLinePerSolveWithADashForTheCoarsest) {
  auto rows = ConvergenceRows(R"({"a":)" + Solve(8, 1, 2, 5) + R"(,"b":)" + Solve(16, 1, 2, 9) + "}");
  ASSERT_TRUE(rows.ok());
  const std::string table = ConvergenceTable(*rows);
  std::istringstream lines(table);
  std::string header, coarse, fine, extra;
  ASSERT_TRUE(std::getline(lines, header));
  ASSERT_TRUE(std::getline(lines, coarse));
  ASSERT_TRUE(std::getline(lines, fine));
  EXPECT_FALSE(std::getline(lines, extra));
  EXPECT_EQ(header.front(), '#');
  EXPECT_NE(header.find("observed order"), std::string::npos);
  std::istringstream c(coarse), f(fine);
  int n = 0, it = 0;
  double h = 0, e = 0;
  std::string order;
  c >> n >> h >> it >> e >> order;
  EXPECT_EQ(n, 8);
  EXPECT_NEAR(h, 1.0 / 9, 1e-5);
  EXPECT_EQ(it, 5);
  EXPECT_NEAR(e, 1.0 / 81, 1e-8);
  EXPECT_EQ(order, "-");
  f >> n >> h >> it >> e >> order;
  EXPECT_EQ(n, 16);
  EXPECT_EQ(it, 9);
  EXPECT_EQ(order, "2.0000");
}

TEST(ConvergenceJsonTest, ReportsTheFinestPairsOrder) {
  auto rows = ConvergenceRows(R"({"a":)" + Solve(8, 1, 1, 5) + R"(,"b":)" + Solve(16, 1, 1, 9) + R"(,"c":)" +
                              Solve(32, 1, 2, 17) + "}");
  ASSERT_TRUE(rows.ok());
  rapidjson::Document doc;
  doc.Parse(ConvergenceJson(*rows).c_str());
  ASSERT_TRUE(doc.IsObject());
  ASSERT_TRUE(doc["table"].IsArray());
  ASSERT_EQ(doc["table"].Size(), 3u);
  EXPECT_TRUE(doc["table"][0]["observed_order"].IsNull());
  EXPECT_STREQ(doc["table"][2]["step"].GetString(), "c");
  EXPECT_NEAR(doc["table"][1]["observed_order"].GetDouble(), 1.0, 1e-9);
  // c·h² after c·h: the pair's order mixes both, and is what is reported.
  const double expected = ObservedOrder(1.0 / 17, std::pow(1.0 / 33, 2), 1.0 / 17, 1.0 / 33);
  EXPECT_NEAR(doc["observed_order"].GetDouble(), expected, 1e-9);
}

}  // namespace
}  // namespace scimesh::poisson

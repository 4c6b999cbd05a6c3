// Unit tests of the Poisson step input parsing and of the even block split.
#include "examples/poisson/solve_input.h"

#include <gtest/gtest.h>

#include "examples/poisson/subdomain.h"

namespace scimesh::poisson {
namespace {

TEST(SolveInputTest, DefaultsAndEveryField) {
  auto d = ParseSolveInput("{}");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->n, 32);
  EXPECT_DOUBLE_EQ(d->tol, 1e-8);
  EXPECT_EQ(d->max_iterations, 2000);
  EXPECT_EQ(d->initial_guess, InitialGuess::kRough);
  EXPECT_TRUE(d->write_solution);
  auto all = ParseSolveInput(
      R"({"n":17,"tol":1e-6,"max_iterations":50,"initial_guess":"zero","write_solution":false})");
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(all->n, 17);
  EXPECT_DOUBLE_EQ(all->tol, 1e-6);
  EXPECT_EQ(all->max_iterations, 50);
  EXPECT_EQ(all->initial_guess, InitialGuess::kZero);
  EXPECT_FALSE(all->write_solution);
}

TEST(SolveInputTest, RefusesBadValuesNamingTheField) {
  struct Case {
    const char* json;
    const char* field;
  } cases[] = {
      {R"({"n":0})", "'n'"},           {R"({"n":"32"})", "'n'"},
      {R"({"n":5000})", "'n'"},        {R"({"n":3.5})", "'n'"},
      {R"({"tol":0})", "'tol'"},       {R"({"tol":1})", "'tol'"},
      {R"({"tol":"small"})", "'tol'"}, {R"({"max_iterations":0})", "'max_iterations'"},
      {R"({"initial_guess":"random"})", "'initial_guess'"},
      {R"({"write_solution":1})", "'write_solution'"},
  };
  for (const auto& c : cases) {
    auto r = ParseSolveInput(c.json);
    ASSERT_FALSE(r.ok()) << c.json;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << c.json;
    EXPECT_NE(r.status().message().find(c.field), std::string::npos) << r.status().message();
  }
  EXPECT_FALSE(ParseSolveInput("[]").ok());
  EXPECT_FALSE(ParseSolveInput("{\"n\":").ok());
}

TEST(SolveInputTest, RefusesAnUnknownKeyNamingItAndTheAllowedOnes) {
  for (const char* json : {R"({"nn":8})", R"({"n":8,"label":"x"})", R"({"tol":1e-6,"Tol":1e-3})"}) {
    auto r = ParseSolveInput(json);
    ASSERT_FALSE(r.ok()) << json;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << json;
    EXPECT_NE(r.status().message().find("unknown key"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("allowed: n, tol, max_iterations, initial_guess, write_solution"),
              std::string::npos)
        << r.status().message();
  }
  EXPECT_NE(ParseSolveInput(R"({"nn":8})").status().message().find("'nn'"), std::string::npos);
  EXPECT_NE(ParseSolveInput(R"({"n":8,"label":"x"})").status().message().find("'label'"), std::string::npos);
  EXPECT_NE(ParseSolveInput(R"({"tol":1e-6,"Tol":1e-3})").status().message().find("'Tol'"), std::string::npos);
  // A key that is not printable text is shown cut and with '?' for the rest.
  auto odd = ParseSolveInput("{\"a\\u0007b\":1}");
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.status().message().find("'a?b'"), std::string::npos) << odd.status().message();
}

TEST(SplitEvenlyTest, CoversTheRangeWithBlocksDifferingByAtMostOne) {
  for (int n : {1, 7, 16, 17, 33}) {
    for (int parts = 1; parts <= n && parts <= 5; ++parts) {
      int next = 0, smallest = n, largest = 0;
      for (int c = 0; c < parts; ++c) {
        const BlockRange b = SplitEvenly(n, parts, c);
        EXPECT_EQ(b.first, next) << n << "/" << parts;
        next += b.count;
        smallest = std::min(smallest, b.count);
        largest = std::max(largest, b.count);
      }
      EXPECT_EQ(next, n);
      EXPECT_LE(largest - smallest, 1);
      EXPECT_GE(smallest, 1);
    }
  }
  EXPECT_EQ(SplitEvenly(17, 3, 0).count, 6);
  EXPECT_EQ(SplitEvenly(17, 3, 2).first, 12);
  EXPECT_EQ(SplitEvenly(17, 3, 2).count, 5);
}

}  // namespace
}  // namespace scimesh::poisson

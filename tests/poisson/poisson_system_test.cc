// System tests of the Poisson example: the real binaries under real mpirun,
// checked on what a user reads (the output JSON, the .vti file, the table).
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Outcome {
  int exit_code = -1;
  std::string out, err;
};

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A fresh working directory per test, removed afterwards.
class PoissonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "scimesh-poisson-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs `cmd` (arguments already quoted) in dir_; stderr to a file.
  Outcome Shell(const std::string& cmd) {
    const fs::path err = dir_ / "stderr.txt";
    const std::string line = "cd '" + dir_.string() + "' && " + cmd + " 2>'" + err.string() + "'";
    Outcome r;
    // The command needs a shell: cd, environment assignments, redirection.
    std::FILE* p = ::popen(line.c_str(), "r");  // NOLINT(cert-env33-c): a test running its own command line
    if (p == nullptr) return r;
    char buf[4096];
    for (std::size_t got; (got = std::fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, got);
    const int status = ::pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.err = Slurp(err);
    return r;
  }

  Outcome Poisson(int ranks, const std::string& input) {
    // OpenMPI as root and on loopback only (the test machines run as root).
    // Under the asan preset the ranks' LeakSanitizer skips TLS roots, as
    // lsan_without_tls_roots does for the shell tests (tests/lib/harness.sh).
    const char* lsan = std::getenv("LSAN_OPTIONS");
    const std::string lsan_env = lsan != nullptr && *lsan != '\0' ? "LSAN_OPTIONS='" + std::string(lsan) + ":use_tls=0' " : "";
    return Shell(lsan_env + "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_tcp_if_include=lo "
                 "OMPI_MCA_oob_tcp_if_include=lo " SCIMESH_MPIEXEC " -np " + std::to_string(ranks) +
                 " --oversubscribe --bind-to none " SCIMESH_POISSON_BIN " --standalone '" + input + "'");
  }

  // A standalone solve that must succeed; its output JSON.
  rapidjson::Document Solve(int ranks, const std::string& input) {
    const Outcome r = Poisson(ranks, input);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    rapidjson::Document doc;
    doc.Parse(r.out.c_str());
    EXPECT_TRUE(doc.IsObject()) << "stdout: " << r.out << "\nstderr: " << r.err;
    if (!doc.IsObject()) doc.Parse("{}");
    return doc;
  }

  fs::path dir_;
};

double Num(const rapidjson::Value& v, const char* key) {
  return v.IsObject() && v.HasMember(key) && v[key].IsNumber() ? v[key].GetDouble() : std::nan("");
}

// The process grid's extent along `d`, or -1 when the output has none.
int Dim(const rapidjson::Value& v, unsigned d) {
  if (!v.IsObject() || !v.HasMember("dims") || !v["dims"].IsArray() || v["dims"].Size() != 3) return -1;
  return v["dims"][d].IsInt() ? v["dims"][d].GetInt() : -1;
}

void ExpectConverged(const rapidjson::Document& d, int n, int ranks) {
  ASSERT_TRUE(d.HasMember("converged") && d["converged"].IsBool());
  EXPECT_TRUE(d["converged"].GetBool());
  EXPECT_EQ(Num(d, "n"), n);
  EXPECT_EQ(Num(d, "ranks"), ranks);
  EXPECT_LT(Num(d, "relative_residual"), Num(d, "tol"));
  EXPECT_GT(Num(d, "iterations"), 10) << "a rough start needs real CG iterations";
  EXPECT_EQ(Dim(d, 0) * Dim(d, 1) * Dim(d, 2), ranks);
  EXPECT_GE(Num(d, "wall_time_s"), 0);
  EXPECT_GT(Num(d, "max_error"), Num(d, "l2_error"));
}

void ExpectSameSolve(const rapidjson::Document& a, const rapidjson::Document& b) {
  EXPECT_EQ(Num(a, "iterations"), Num(b, "iterations"));
  EXPECT_NEAR(Num(a, "l2_error"), Num(b, "l2_error"), 1e-10 * Num(a, "l2_error"));
  EXPECT_NEAR(Num(a, "max_error"), Num(b, "max_error"), 1e-10 * Num(a, "max_error"));
}

TEST_F(PoissonTest, ThreeResolutionsConvergeAtSecondOrder) {
  std::string previous = "{";
  double last_error = 1;
  for (int n : {8, 16, 32}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    const Outcome run = Poisson(4, R"({"n":)" + std::to_string(n) + R"(,"tol":1e-8,"max_iterations":2000})");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    rapidjson::Document d;
    d.Parse(run.out.c_str());
    ASSERT_TRUE(d.IsObject()) << run.out;
    ExpectConverged(d, n, 4);
    EXPECT_LT(Num(d, "l2_error"), last_error);
    last_error = Num(d, "l2_error");
    EXPECT_TRUE(fs::exists(dir_ / ("solution-" + std::to_string(n) + ".vti")));
    // The solves' outputs, keyed by step id, as a report step's lease holds them.
    previous += (n == 8 ? "" : ",") + std::string("\"solve-") + std::to_string(n) + "\":" + run.out;
  }
  previous += "}";
  const Outcome report = Shell(SCIMESH_CONVERGENCE_REPORT_BIN " --standalone '" + previous + "'");
  ASSERT_EQ(report.exit_code, 0) << report.err;
  rapidjson::Document doc;
  doc.Parse(report.out.c_str());
  ASSERT_TRUE(doc.IsObject()) << report.out;
  const double p = Num(doc, "observed_order");
  EXPECT_GE(p, 1.8);
  EXPECT_LE(p, 2.2);
  ASSERT_TRUE(doc.HasMember("table") && doc["table"].IsArray());
  ASSERT_EQ(doc["table"].Size(), 3u);
  EXPECT_GE(Num(doc["table"][1], "observed_order"), 1.8);
  EXPECT_LE(Num(doc["table"][1], "observed_order"), 2.2);
  const std::string table = Slurp(dir_ / "convergence.txt");
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 4) << table;
  EXPECT_NE(table.find("observed order"), std::string::npos);
}

TEST_F(PoissonTest, OneRankAndFourRanksGiveTheSameSolve) {
  const std::string input = R"({"n":16,"write_solution":false})";
  auto one = Solve(1, input);
  auto four = Solve(4, input);
  ExpectConverged(one, 16, 1);
  ExpectConverged(four, 16, 4);
  ExpectSameSolve(one, four);
  EXPECT_EQ(Dim(one, 0), 1);
  EXPECT_EQ(Dim(four, 0), 2);
  EXPECT_EQ(Dim(four, 1), 2);
}

TEST_F(PoissonTest, UnevenDecompositionsGiveTheSameSolve) {
  // n = 17 on a 3x1x1 grid (6/6/5 planes) and a 2x2x1 grid (9/8 per split).
  const std::string input = R"({"n":17,"write_solution":false})";
  auto one = Solve(1, input);
  auto three = Solve(3, input);
  auto four = Solve(4, input);
  ExpectConverged(three, 17, 3);
  ExpectConverged(four, 17, 4);
  EXPECT_EQ(Dim(three, 0), 3);
  ExpectSameSolve(one, three);
  ExpectSameSolve(one, four);
}

TEST_F(PoissonTest, FromZeroTheDiscreteEigenproblemTakesOneIteration) {
  // f sampled at the nodes is an eigenvector of the 7-point operator with
  // eigenvalue λ = 12/h²·sin²(πh/2); the discrete solution is (3π²/λ)·u, so
  // CG from zero stops after one step and the error is known in closed form.
  // Any slip in the stencil, the spacing or the halo breaks both.
  const int n = 11;
  auto d = Solve(4, R"({"n":11,"initial_guess":"zero","write_solution":false})");
  const double pi = std::numbers::pi, h = 1.0 / (n + 1);
  const double lambda = 12.0 / (h * h) * std::pow(std::sin(pi * h / 2), 2);
  double u_max = 0, u_sq = 0;
  for (int i = 1; i <= n; ++i) {
    const double s = std::sin(pi * i * h);
    u_max = std::max(u_max, s);
    u_sq += s * s;
  }
  const double factor = std::abs(1.0 - 3 * pi * pi / lambda);
  EXPECT_EQ(Num(d, "iterations"), 1);
  EXPECT_TRUE(d.HasMember("converged") && d["converged"].IsBool() && d["converged"].GetBool());
  EXPECT_NEAR(Num(d, "max_error"), factor * std::pow(u_max, 3), 1e-12);
  EXPECT_NEAR(Num(d, "l2_error"), factor * std::sqrt(h * h * h) * std::pow(u_sq, 1.5), 1e-12);
}

TEST_F(PoissonTest, SolutionFileIsVtkImageDataOfTheWholeGrid) {
  const int n = 8;
  auto d = Solve(4, R"({"n":8})");
  ASSERT_TRUE(d.HasMember("solution") && d["solution"].IsString());
  EXPECT_STREQ(d["solution"].GetString(), "solution-8.vti");
  const std::string vti = Slurp(dir_ / "solution-8.vti");
  ASSERT_FALSE(vti.empty());
  EXPECT_NE(vti.find("<VTKFile type=\"ImageData\""), std::string::npos);
  EXPECT_NE(vti.find("WholeExtent=\"0 9 0 9 0 9\""), std::string::npos);
  auto values = [&](const std::string& name) {
    std::vector<double> v;
    const auto at = vti.find("Name=\"" + name + "\"");
    if (at == std::string::npos) return v;
    const auto start = vti.find('>', at) + 1, end = vti.find("</DataArray>", start);
    std::istringstream in(vti.substr(start, end - start));
    for (double x; in >> x;) v.push_back(x);
    return v;
  };
  const auto u = values("u"), err = values("error");
  const std::size_t m = n + 2;
  ASSERT_EQ(u.size(), m * m * m);
  ASSERT_EQ(err.size(), m * m * m);
  double max_err = 0;
  for (std::size_t k = 0; k < m; ++k)
    for (std::size_t j = 0; j < m; ++j)
      for (std::size_t i = 0; i < m; ++i) {
        const std::size_t q = (k * m + j) * m + i;
        const bool boundary = i == 0 || j == 0 || k == 0 || i == m - 1 || j == m - 1 || k == m - 1;
        if (boundary) {
          EXPECT_NEAR(u[q], 0.0, 1e-12) << i << "," << j << "," << k;
        } else {
          EXPECT_GT(u[q], 0.0) << "the solution is positive inside";
        }
        max_err = std::max(max_err, std::abs(err[q]));
      }
  // Rank-gathered values land where they belong: the error field matches
  // the max error the solver measured on its own ranks.
  EXPECT_NEAR(max_err, Num(d, "max_error"), 1e-9 * Num(d, "max_error") + 1e-11);
  // Symmetry of the problem: u(x,y,z) = u(y,x,z) = u(1-x,y,z) to solver accuracy.
  auto at = [&](std::size_t i, std::size_t j, std::size_t k) { return u[(k * m + j) * m + i]; };
  EXPECT_NEAR(at(2, 3, 4), at(3, 2, 4), 1e-6);
  EXPECT_NEAR(at(2, 3, 4), at(m - 1 - 2, 3, 4), 1e-6);
  EXPECT_NEAR(at(2, 3, 4), at(2, 3, m - 1 - 4), 1e-6);
}

TEST_F(PoissonTest, BadInputFailsOnEveryRankWithTheReason) {
  const Outcome zero = Poisson(4, R"({"n":0})");
  EXPECT_NE(zero.exit_code, 0);
  EXPECT_NE(zero.err.find("'n'"), std::string::npos) << zero.err;
  EXPECT_TRUE(zero.out.empty()) << zero.out;
  const Outcome tiny = Poisson(4, R"({"n":1})");  // a 2x2x1 grid cannot split one point
  EXPECT_NE(tiny.exit_code, 0);
  EXPECT_NE(tiny.err.find("too small for 4 ranks"), std::string::npos) << tiny.err;
  const Outcome misspelt = Poisson(2, R"({"nn":8})");  // not a silent n = 32 solve
  EXPECT_EQ(misspelt.exit_code, 2);
  EXPECT_NE(misspelt.err.find("unknown key 'nn' (allowed: n, tol,"), std::string::npos) << misspelt.err;
  EXPECT_TRUE(misspelt.out.empty()) << misspelt.out;
  const Outcome not_json = Poisson(2, "{n:3");
  EXPECT_NE(not_json.exit_code, 0);
  EXPECT_NE(not_json.err.find("not a JSON object"), std::string::npos) << not_json.err;
}

TEST_F(PoissonTest, MaxIterationsStopsWithoutConverging) {
  auto d = Solve(2, R"({"n":16,"max_iterations":5,"write_solution":false})");
  EXPECT_EQ(Num(d, "iterations"), 5);
  ASSERT_TRUE(d.HasMember("converged") && d["converged"].IsBool());
  EXPECT_FALSE(d["converged"].GetBool());
  EXPECT_GT(Num(d, "relative_residual"), Num(d, "tol"));
}

// A lease.json as the launcher writes it into an attempt directory. No
// coordinator and no worker id: rank 0 cannot take the lease over, which the
// runtime reports and survives (the launcher would keep heartbeating).
void WriteLease(const fs::path& dir, const std::string& step_id, const std::string& input,
                const std::string& previous) {
  std::ofstream(dir / "lease.json")
      << R"({"lease_id":"l_0c8e51d2a4b94f17","run_id":"r_6f1c2a9e0b7d4c35","step_id":")" << step_id
      << R"(","workflow":"mesh-study","version":"1","attempt":1,"input":)" << input << R"(,"previous":)" << previous
      << R"(,"run_state":{},"correlation":null,"idempotency_key":"r_6f1c2a9e0b7d4c35/)" << step_id
      << R"(","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","span_id":"00f067aa0ba902b7",)"
      << R"("delivery":"at_least_once","resources":{"nodes":1,"ranks_per_node":4,"cpus_per_rank":1,)"
      << R"("gpus_per_rank":0},"walltime_s":60,"input_artifacts":[],"lease_ttl_ms":30000,"heartbeat_ms":10000,)"
      << R"("lease_expires_at":"2026-11-29T08:00:30.000Z","coordinator_url":"http://127.0.0.1:9"})";
}

TEST_F(PoissonTest, AsAStepTheOutputAndArtifactLandInTheAttemptDirectory) {
  WriteLease(dir_, "solve-8", R"({"n":8,"tol":1e-8,"max_iterations":2000})", "{}");
  const Outcome run = Shell("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_tcp_if_include=lo "
                            "OMPI_MCA_oob_tcp_if_include=lo SCIMESH_ATTEMPT_DIR='" + dir_.string() + "' " SCIMESH_MPIEXEC
                            " -np 4 --oversubscribe --bind-to none " SCIMESH_POISSON_BIN);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_TRUE(run.out.empty()) << "as a step, the output goes to output.json: " << run.out;
  rapidjson::Document d;
  d.Parse(Slurp(dir_ / "output.json").c_str());
  ASSERT_TRUE(d.IsObject());
  ExpectConverged(d, 8, 4);
  const std::string artifact = Slurp(dir_ / "artifacts" / "solution-8.vti");
  EXPECT_FALSE(artifact.empty());
  EXPECT_EQ(artifact, Slurp(dir_ / "solution-8.vti"));

  // The report step of the same study, one rank, from its lease's previous outputs.
  std::ostringstream previous;
  previous.precision(17);
  previous << R"({"solve-8":)" << Slurp(dir_ / "output.json") << R"(,"solve-16":{"n":16,"iterations":70,"l2_error":)"
           << Num(d, "l2_error") * std::pow(9.0 / 17.0, 2) << "}}";
  const fs::path report_dir = dir_ / "report";
  fs::create_directory(report_dir);
  WriteLease(report_dir, "report", "{}", previous.str());
  const Outcome report = Shell("cd report && OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
                               "SCIMESH_ATTEMPT_DIR='" + report_dir.string() + "' " SCIMESH_CONVERGENCE_REPORT_BIN);
  ASSERT_EQ(report.exit_code, 0) << report.err;
  rapidjson::Document out;
  out.Parse(Slurp(report_dir / "output.json").c_str());
  ASSERT_TRUE(out.IsObject());
  EXPECT_NEAR(Num(out, "observed_order"), 2.0, 1e-4);
  EXPECT_EQ(Slurp(report_dir / "artifacts" / "convergence.txt"), Slurp(report_dir / "convergence.txt"));
}

TEST_F(PoissonTest, ReportRefusesTooFewSolves) {
  const Outcome r = Shell(SCIMESH_CONVERGENCE_REPORT_BIN R"( --standalone '{"solve-8":{"n":8,"l2_error":0.01}}')");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("at least two solves"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "convergence.txt"));
}

}  // namespace

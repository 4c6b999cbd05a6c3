// MPI test of SolveCg's hooks (run under mpirun -np 4): a cancellation seen by
// one rank alone stops every rank at the same iteration; progress arrives
// every 10 iterations with the same residual on every rank. Exit 0 only when
// every check holds.
#include <mpi.h>

#include <cstdio>
#include <vector>

#include "examples/poisson/conjugate_gradient.h"
#include "examples/poisson/model_problem.h"
#include "examples/poisson/subdomain.h"

using namespace scimesh::poisson;

namespace {

int rank_ = 0;

int Check(bool ok, const char* what) {
  if (!ok) (void)std::fprintf(stderr, "rank %d: FAILED: %s\n", rank_, what);
  return ok ? 0 : 1;
}

// Rank 1 "loses the lease" at its 7th poll; the others never see it themselves.
int CancelSeenByOneRank(const Subdomain& s) {
  int polls = 0;
  CgHooks hooks;
  hooks.cancelled = [&] { return ++polls >= 7 && s.rank() == 1; };
  const auto b = RightHandSide(s);
  auto x = RoughField(s);
  auto out = SolveCg(s, b, x, 1e-10, 1000, hooks);
  if (!out.ok()) return Check(false, "SolveCg failed");
  int failures = Check(out->cancelled, "every rank must report the cancellation");
  failures += Check(!out->converged, "a cancelled solve has not converged");
  failures += Check(out->iterations == 7, "every rank must stop at the iteration rank 1 saw it");
  failures += Check(polls == 7, "cancelled() is polled once per iteration");
  return failures;
}

int ProgressEveryTenIterations(const Subdomain& s) {
  std::vector<int> seen;
  std::vector<double> residuals;
  CgHooks hooks;
  hooks.progress = [&](int k, double r) {
    seen.push_back(k);
    residuals.push_back(r);
  };
  const auto b = RightHandSide(s);
  auto x = RoughField(s);
  auto out = SolveCg(s, b, x, 1e-8, 1000, hooks);
  if (!out.ok()) return Check(false, "SolveCg failed");
  int failures = Check(out->converged && !out->cancelled, "the solve converges");
  failures += Check(out->iterations > 20, "a rough start needs real iterations");
  failures += Check(int(seen.size()) == out->iterations / 10, "one progress call per 10 iterations");
  for (std::size_t i = 0; i < seen.size(); ++i) failures += Check(seen[i] == int(10 * (i + 1)), "iteration numbers");
  // Every rank was given the same residual (it comes from one reduction).
  for (double r : residuals) {
    double lo = r, hi = r;
    MPI_Allreduce(&r, &lo, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&r, &hi, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    failures += Check(lo == hi, "progress residual differs between ranks");
  }
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  int failures = 0;
  {
    auto s = Subdomain::Create(MPI_COMM_WORLD, 12);
    if (!s.ok()) {
      failures += Check(false, "Subdomain::Create");
    } else {
      failures += CancelSeenByOneRank(**s);
      failures += ProgressEveryTenIterations(**s);
    }
  }
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) std::printf("%s: %d failed checks\n", total == 0 ? "PASS" : "FAIL", total);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}

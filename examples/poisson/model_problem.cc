// The 7-point operator, manufactured solution and error norms of the model problem.
#include "examples/poisson/model_problem.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace scimesh::poisson {

namespace {

// splitmix64: a well-mixed 64-bit hash, cheap and identical everywhere.
std::uint64_t Mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Calls fn(index, gi, gj, gk) for every owned point (global indices).
template <typename Fn>
void ForOwned(const Subdomain& s, Fn&& fn) {
  const auto& c = s.count();
  const auto& f = s.first();
  for (int k = 0; k < c[2]; ++k)
    for (int j = 0; j < c[1]; ++j)
      for (int i = 0; i < c[0]; ++i) fn(s.Index(i, j, k), f[0] + i, f[1] + j, f[2] + k);
}

}  // namespace

double ExactSolution(double x, double y, double z) {
  using std::numbers::pi;
  return std::sin(pi * x) * std::sin(pi * y) * std::sin(pi * z);
}

void ApplyLaplacian(const Subdomain& s, const std::vector<double>& u, std::vector<double>& out) {
  const auto& c = s.count();
  const std::size_t sy = std::size_t(c[0]) + 2, sz = sy * (std::size_t(c[1]) + 2);
  const double inv_h2 = 1.0 / (s.h() * s.h());
  for (int k = 0; k < c[2]; ++k)
    for (int j = 0; j < c[1]; ++j) {
      const std::size_t row = s.Index(0, j, k);
      for (int i = 0; i < c[0]; ++i) {
        const std::size_t p = row + std::size_t(i);
        out[p] = (6.0 * u[p] - u[p - 1] - u[p + 1] - u[p - sy] - u[p + sy] - u[p - sz] - u[p + sz]) * inv_h2;
      }
    }
}

std::vector<double> RightHandSide(const Subdomain& s) {
  std::vector<double> f = s.NewField();
  const double h = s.h(), scale = 3.0 * std::numbers::pi * std::numbers::pi;
  ForOwned(s, [&](std::size_t p, int gi, int gj, int gk) {
    f[p] = scale * ExactSolution((gi + 1) * h, (gj + 1) * h, (gk + 1) * h);
  });
  return f;
}

std::vector<double> RoughField(const Subdomain& s) {
  std::vector<double> v = s.NewField();
  const std::uint64_t n = std::uint64_t(s.n());
  ForOwned(s, [&](std::size_t p, int gi, int gj, int gk) {
    const std::uint64_t global = (std::uint64_t(gk) * n + std::uint64_t(gj)) * n + std::uint64_t(gi);
    // The top 53 bits make a uniform double in [0, 1).
    v[p] = 2.0 * double(Mix(global) >> 11) * 0x1.0p-53 - 1.0;
  });
  return v;
}

double LocalDot(const Subdomain& s, const std::vector<double>& a, const std::vector<double>& b) {
  double sum = 0;
  ForOwned(s, [&](std::size_t p, int, int, int) { sum += a[p] * b[p]; });
  return sum;
}

ErrorNorms SolutionError(const Subdomain& s, const std::vector<double>& u) {
  const double h = s.h();
  double local_sq = 0, local_max = 0;
  ForOwned(s, [&](std::size_t p, int gi, int gj, int gk) {
    const double e = std::abs(u[p] - ExactSolution((gi + 1) * h, (gj + 1) * h, (gk + 1) * h));
    local_sq += e * e;
    local_max = std::max(local_max, e);
  });
  double sq = 0;
  ErrorNorms norms;
  MPI_Allreduce(&local_sq, &sq, 1, MPI_DOUBLE, MPI_SUM, s.comm());
  MPI_Allreduce(&local_max, &norms.max, 1, MPI_DOUBLE, MPI_MAX, s.comm());
  norms.l2 = std::sqrt(h * h * h * sq);
  return norms;
}

}  // namespace scimesh::poisson

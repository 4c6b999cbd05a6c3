// Unpreconditioned conjugate gradients over a Subdomain.
#include "examples/poisson/conjugate_gradient.h"

#include <cmath>

#include "examples/poisson/model_problem.h"

namespace scimesh::poisson {

namespace {

double SumAll(const Subdomain& s, double local) {
  double global = 0;
  MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, s.comm());
  return global;
}

}  // namespace

Result<CgOutcome> SolveCg(const Subdomain& s, const std::vector<double>& b, std::vector<double>& x, double tol,
                          int max_iterations, const CgHooks& hooks) {
  if (b.size() != s.field_size() || x.size() != s.field_size())
    return Status::InvalidArgument("cg: field sizes do not match the subdomain");
  const double b_norm = std::sqrt(SumAll(s, LocalDot(s, b, b)));
  if (!(b_norm > 0)) return Status::InvalidArgument("cg: the right-hand side is zero");

  std::vector<double> r = s.NewField(), p = s.NewField(), ap = s.NewField();
  SCIMESH_RETURN_IF_ERROR(s.ExchangeHalo(x));
  ApplyLaplacian(s, x, ap);
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = b[i] - ap[i];  // ghosts stay 0 - 0
  p = r;
  double rr = SumAll(s, LocalDot(s, r, r));

  CgOutcome out;
  out.relative_residual = std::sqrt(rr) / b_norm;
  out.converged = out.relative_residual < tol;
  while (!out.converged && out.iterations < max_iterations) {
    SCIMESH_RETURN_IF_ERROR(s.ExchangeHalo(p));
    ApplyLaplacian(s, p, ap);
    const double alpha = rr / SumAll(s, LocalDot(s, p, ap));
    for (std::size_t i = 0; i < x.size(); ++i) {
      x[i] += alpha * p[i];
      r[i] -= alpha * ap[i];
    }
    // One reduction carries both r·r and "has any rank seen a cancellation",
    // so all ranks agree on when to stop without a collective of its own.
    const bool seen = hooks.cancelled && hooks.cancelled();
    double local[2] = {LocalDot(s, r, r), seen ? 1.0 : 0.0}, global[2] = {0, 0};
    MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_SUM, s.comm());
    ++out.iterations;
    if (global[1] > 0) {
      out.cancelled = true;
      break;
    }
    const double rr_next = global[0];
    out.relative_residual = std::sqrt(rr_next) / b_norm;
    out.converged = out.relative_residual < tol;
    if (hooks.progress && hooks.progress_every > 0 && out.iterations % hooks.progress_every == 0)
      hooks.progress(out.iterations, out.relative_residual);
    const double beta = rr_next / rr;
    rr = rr_next;
    for (std::size_t i = 0; i < p.size(); ++i) p[i] = r[i] + beta * p[i];
  }
  return out;
}

}  // namespace scimesh::poisson

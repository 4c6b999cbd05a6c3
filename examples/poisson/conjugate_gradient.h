// Conjugate gradients for the model problem's 7-point operator on a Subdomain,
// with a cancellation poll every iteration and periodic progress.
#pragma once

#include <functional>
#include <vector>

#include "examples/poisson/subdomain.h"
#include "protocol/util/status.h"

namespace scimesh::poisson {

struct CgHooks {
  // Polled once per iteration on every rank (cheap, local). Ranks may see a
  // cancellation at different polls; CG folds the flag into the reduction it
  // makes anyway, so every rank leaves at the same iteration. May be empty.
  std::function<bool()> cancelled;
  // Called on every rank every `progress_every` iterations with the
  // iteration number and the relative residual (the same on every rank).
  std::function<void(int iteration, double relative_residual)> progress;
  int progress_every = 10;
};

struct CgOutcome {
  int iterations = 0;
  double relative_residual = 0;  // ||r_k|| / ||b||, from the recurrence
  bool converged = false;        // relative_residual < tol
  bool cancelled = false;        // stopped because a rank saw a cancellation
};

// Collective: solves A·x = b (A from ApplyLaplacian) by unpreconditioned CG
// from the x given, until ||r_k|| / ||b|| < tol, max_iterations, or a
// cancellation. `x` is updated in place (its ghosts are overwritten). Fails
// only when MPI does (InvalidArgument for mismatched field sizes or b = 0).
Result<CgOutcome> SolveCg(const Subdomain& s, const std::vector<double>& b, std::vector<double>& x, double tol,
                          int max_iterations, const CgHooks& hooks);

}  // namespace scimesh::poisson

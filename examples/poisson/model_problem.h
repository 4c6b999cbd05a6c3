// The model problem on a Subdomain: the 7-point operator for -∇²u with u = 0
// on the boundary of the unit cube, the manufactured solution
// u = sin(πx)·sin(πy)·sin(πz), its right-hand side f = 3π²·u, initial guesses
// and the error norms. All functions are local to the rank unless marked
// collective; none fails except where a Status is returned.
#pragma once

#include <cstdint>
#include <vector>

#include "examples/poisson/subdomain.h"

namespace scimesh::poisson {

// u(x, y, z) = sin(πx)·sin(πy)·sin(πz).
double ExactSolution(double x, double y, double z);

// out = A·u on owned points, A = (6u_ijk - Σ six neighbours) / h²: the
// 7-point finite-difference -∇². `u`'s ghost layer must be current (see
// Subdomain::ExchangeHalo); `out`'s ghosts are left untouched.
void ApplyLaplacian(const Subdomain& s, const std::vector<double>& u, std::vector<double>& out);

// f = 3π²·u sampled at the owned nodes (ghosts 0).
std::vector<double> RightHandSide(const Subdomain& s);

// A pseudo-random value in [-1, 1) at every owned node, a function of the
// node's global index only, so every decomposition starts CG from the same
// vector and takes the same iterations. Ghosts 0.
std::vector<double> RoughField(const Subdomain& s);

// Σ a·b over owned points (no reduction).
double LocalDot(const Subdomain& s, const std::vector<double>& a, const std::vector<double>& b);

struct ErrorNorms {
  double l2 = 0;   // sqrt(h³ Σ (u_h - u)²): the discrete L2 norm on the unit cube
  double max = 0;  // max |u_h - u|
};

// Collective: the error of `u` against ExactSolution over the whole grid.
ErrorNorms SolutionError(const Subdomain& s, const std::vector<double>& u);

}  // namespace scimesh::poisson

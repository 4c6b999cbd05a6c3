// SolveInput: the input of one Poisson solve step, parsed from its JSON text.
#pragma once

#include <string>
#include <string_view>

#include "protocol/util/status.h"

namespace scimesh::poisson {

// How CG starts. The manufactured right-hand side f = 3π²·sin·sin·sin sampled
// at the nodes is an exact eigenvector of the 7-point operator, so from zero
// CG stops after one iteration; a rough start puts every mode in the error,
// as a general right-hand side would (see README.md).
enum class InitialGuess { kRough, kZero };

struct SolveInput {
  int n = 32;                     // interior points per dimension
  double tol = 1e-8;              // on ||r_k|| / ||b||
  int max_iterations = 2000;
  InitialGuess initial_guess = InitialGuess::kRough;
  bool write_solution = true;     // write solution-<n>.vti (ASCII VTK ImageData)
};

// Parses `{"n": 32, "tol": 1e-8, "max_iterations": 2000, "initial_guess":
// "rough"|"zero", "write_solution": true}`; every field is optional. Fails
// with InvalidArgument naming the field when a value has the wrong type or
// range, and naming the key and the allowed ones when a key is unknown (a
// misspelt "nn" would otherwise solve n = 32 without a word).
// Pure; thread-safe.
Result<SolveInput> ParseSolveInput(std::string_view json);

std::string_view InitialGuessName(InitialGuess guess);

}  // namespace scimesh::poisson

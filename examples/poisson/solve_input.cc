// Parsing and validation of a Poisson solve step's input JSON.
#include "examples/poisson/solve_input.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

namespace scimesh::poisson {

namespace {

// Large enough for any mesh a cluster allocation solves; small enough that
// (n+2)^3 fits comfortably in the index types used.
constexpr int kMaxN = 4096;

// Every key the input may hold; any other is refused, so a misspelt key
// ("nn") fails instead of solving with the default.
constexpr std::array<std::string_view, 5> kKeys = {"n", "tol", "max_iterations", "initial_guess", "write_solution"};

// The first key of `root` not in kKeys, refused with the allowed ones named.
Status RefuseUnknownKeys(const rapidjson::Value& root) {
  for (const auto& m : root.GetObject()) {
    const std::string_view name(m.name.GetString(), m.name.GetStringLength());
    if (std::find(kKeys.begin(), kKeys.end(), name) != kKeys.end()) continue;
    std::string allowed;
    for (std::string_view k : kKeys) allowed += (allowed.empty() ? "" : ", ") + std::string(k);
    // The key is the user's text: cut and made printable before it is shown.
    std::string shown;
    for (char c : name.substr(0, 64)) shown += (c >= 0x20 && c < 0x7f) ? c : '?';
    return Status::InvalidArgument("input: unknown key '" + shown + "' (allowed: " + allowed + ")");
  }
  return Status::Ok();
}

}  // namespace

std::string_view InitialGuessName(InitialGuess guess) {
  return guess == InitialGuess::kZero ? "zero" : "rough";
}

Result<SolveInput> ParseSolveInput(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) return Status::InvalidArgument("input is not a JSON object");
  const rapidjson::Value& root = doc;  // const iterators: comparable without C++20 ambiguity
  if (Status s = RefuseUnknownKeys(root); !s.ok()) return s;
  SolveInput in;
  if (auto it = root.FindMember("n"); it != root.MemberEnd()) {
    if (!it->value.IsInt() || it->value.GetInt() < 1 || it->value.GetInt() > kMaxN)
      return Status::InvalidArgument("input: 'n' must be an integer 1.." + std::to_string(kMaxN));
    in.n = it->value.GetInt();
  }
  if (auto it = root.FindMember("tol"); it != root.MemberEnd()) {
    if (!it->value.IsNumber() || !(it->value.GetDouble() > 0.0) || !(it->value.GetDouble() < 1.0))
      return Status::InvalidArgument("input: 'tol' must be a number in (0, 1)");
    in.tol = it->value.GetDouble();
  }
  if (auto it = root.FindMember("max_iterations"); it != root.MemberEnd()) {
    if (!it->value.IsInt() || it->value.GetInt() < 1)
      return Status::InvalidArgument("input: 'max_iterations' must be a positive integer");
    in.max_iterations = it->value.GetInt();
  }
  if (auto it = root.FindMember("initial_guess"); it != root.MemberEnd()) {
    std::string_view v = it->value.IsString() ? std::string_view(it->value.GetString()) : "";
    if (v == "rough") {
      in.initial_guess = InitialGuess::kRough;
    } else if (v == "zero") {
      in.initial_guess = InitialGuess::kZero;
    } else {
      return Status::InvalidArgument("input: 'initial_guess' must be \"rough\" or \"zero\"");
    }
  }
  if (auto it = root.FindMember("write_solution"); it != root.MemberEnd()) {
    if (!it->value.IsBool()) return Status::InvalidArgument("input: 'write_solution' must be a boolean");
    in.write_solution = it->value.GetBool();
  }
  return in;
}

}  // namespace scimesh::poisson

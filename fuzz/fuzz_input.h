// FuzzInput: how a fuzz input names its parser. Each input is
// "<parser name>\n<body>", so one harness covers every parser of one side and
// the committed corpus stays readable (fuzz/corpus/*/). Pure; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace scimesh::fuzz {

struct FuzzInput {
  std::string_view parser;  // before the first newline ("" when none)
  std::string_view body;    // after it
};

inline FuzzInput SplitFuzzInput(const uint8_t* data, size_t size) {
  std::string_view all(reinterpret_cast<const char*>(data), size);
  size_t nl = all.find('\n');
  if (nl == std::string_view::npos) return {std::string_view(), all};
  return {all.substr(0, nl), all.substr(nl + 1)};
}

// Stops the fuzzer on a broken property (not just a crash): libFuzzer reports
// the input that did it.
[[noreturn]] inline void PropertyBroken() { __builtin_trap(); }

}  // namespace scimesh::fuzz

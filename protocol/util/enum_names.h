// The wire spelling of a closed set of values: one table per enum, read both
// ways. Header-only; constexpr tables, thread-safe lookups.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

namespace scimesh {

template <typename E, size_t N>
using EnumNames = std::array<std::pair<E, std::string_view>, N>;

// The name of `value` in `table`; "unknown" for a value it does not hold.
template <typename E, size_t N>
constexpr std::string_view NameOf(const EnumNames<E, N>& table, E value) {
  for (const auto& [e, name] : table) {
    if (e == value) return name;
  }
  return "unknown";
}

// The value `name` spells in `table`; nullopt for any other text.
template <typename E, size_t N>
constexpr std::optional<E> ValueOf(const EnumNames<E, N>& table, std::string_view name) {
  for (const auto& [e, n] : table) {
    if (n == name) return e;
  }
  return std::nullopt;
}

}  // namespace scimesh

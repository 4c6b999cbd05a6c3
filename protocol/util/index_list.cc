// Parsing and formatting of "0-3,8" index lists and hex masks.
#include "protocol/util/index_list.h"

#include <algorithm>
#include <charconv>

namespace scimesh {

std::vector<std::string_view> SplitCommas(std::string_view text) {
  std::vector<std::string_view> items;
  for (size_t start = 0; start <= text.size();) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    items.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

Result<long long> ParseInteger(std::string_view text, long long min, long long max) {
  long long value = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  // from_chars accepts a leading '-' but not '+' or spaces: exactly what a
  // SLURM variable or a list item may hold.
  auto [ptr, ec] = std::from_chars(first, last, value);
  if (text.empty() || ec != std::errc() || ptr != last) {
    return Status::InvalidArgument("'" + std::string(text) + "' is not an integer");
  }
  if (value < min || value > max) {
    return Status::InvalidArgument("'" + std::string(text) + "' is outside " + std::to_string(min) +
                                   ".." + std::to_string(max));
  }
  return value;
}

Result<std::vector<int>> ParseIndexList(std::string_view text, int max_index, size_t max_count) {
  if (text.empty()) return Status::InvalidArgument("empty index list");
  std::vector<int> out;
  for (std::string_view item : SplitCommas(text)) {
    if (item.empty()) return Status::InvalidArgument("empty item in index list '" + std::string(text) + "'");
    size_t dash = item.find('-');
    std::string_view lo_text = item.substr(0, dash);
    std::string_view hi_text = dash == std::string_view::npos ? item : item.substr(dash + 1);
    auto lo = ParseInteger(lo_text, 0, max_index);
    auto hi = ParseInteger(hi_text, 0, max_index);
    if (!lo.ok() || !hi.ok()) {
      return Status::InvalidArgument("bad item '" + std::string(item) + "' in index list '" +
                                     std::string(text) + "'");
    }
    if (*hi < *lo) {
      return Status::InvalidArgument("range '" + std::string(item) + "' ends before it starts");
    }
    if (out.size() + static_cast<size_t>(*hi - *lo + 1) > max_count) {
      return Status::InvalidArgument("index list '" + std::string(text) + "' has more than " +
                                     std::to_string(max_count) + " indices");
    }
    for (long long i = *lo; i <= *hi; ++i) out.push_back(static_cast<int>(i));
  }
  std::sort(out.begin(), out.end());
  if (auto dup = std::adjacent_find(out.begin(), out.end()); dup != out.end()) {
    return Status::InvalidArgument("index " + std::to_string(*dup) + " appears twice in '" +
                                   std::string(text) + "'");
  }
  return out;
}

std::string FormatIndexList(const std::vector<int>& indices) {
  std::string out;
  for (size_t i = 0; i < indices.size();) {
    size_t j = i;
    while (j + 1 < indices.size() && indices[j + 1] == indices[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(indices[i]);
    if (j > i) out += '-' + std::to_string(indices[j]);
    i = j + 1;
  }
  return out;
}

std::string FormatHexMask(const std::vector<int>& indices) {
  int top = -1;
  for (int i : indices) top = std::max(top, i);
  if (top < 0) return "0x0";
  // One hex digit per 4 indices, most significant first.
  std::string digits(static_cast<size_t>(top / 4 + 1), '0');
  std::vector<int> nibble(digits.size(), 0);
  for (int i : indices) nibble[static_cast<size_t>(i / 4)] |= 1 << (i % 4);
  for (size_t d = 0; d < digits.size(); ++d) {
    digits[digits.size() - 1 - d] = "0123456789abcdef"[nibble[d]];
  }
  return "0x" + digits;
}

}  // namespace scimesh

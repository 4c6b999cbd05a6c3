// SLURM environment strings: host lists, cpus-per-node counts, GPU counts, times.
#include "launcher/allocation/slurm_env.h"

#include <ctime>
#include <set>

#include "protocol/util/index_list.h"

namespace scimesh::launcher {
namespace {

// One bracket group's values, already formatted with their zero padding.
Result<std::vector<std::string>> ExpandRanges(std::string_view ranges, std::string_view item) {
  if (ranges.empty()) return Status::InvalidArgument("empty brackets in host list item '" + std::string(item) + "'");
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= ranges.size()) {
    size_t comma = ranges.find(',', start);
    if (comma == std::string_view::npos) comma = ranges.size();
    std::string_view range = ranges.substr(start, comma - start);
    size_t dash = range.find('-');
    std::string_view lo_text = range.substr(0, dash);
    std::string_view hi_text = dash == std::string_view::npos ? range : range.substr(dash + 1);
    auto lo = ParseInteger(lo_text, 0, 999999999);
    auto hi = ParseInteger(hi_text, 0, 999999999);
    if (!lo.ok() || !hi.ok()) {
      return Status::InvalidArgument("bad range '" + std::string(range) + "' in host list item '" +
                                     std::string(item) + "'");
    }
    if (*hi < *lo) {
      return Status::InvalidArgument("range '" + std::string(range) + "' in host list item '" +
                                     std::string(item) + "' ends before it starts");
    }
    if (*hi - *lo >= 65536) {
      return Status::InvalidArgument("range '" + std::string(range) + "' is too large");
    }
    // SLURM pads every value to the width of the range's first number.
    const size_t width = lo_text.size();
    for (long long v = *lo; v <= *hi; ++v) {
      std::string digits = std::to_string(v);
      if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
      out.push_back(std::move(digits));
    }
    start = comma + 1;
  }
  return out;
}

// One top-level item: literal text and bracket groups, expanded as a product.
Status ExpandItem(std::string_view item, size_t max_hosts, std::vector<std::string>& hosts) {
  std::vector<std::string> names{""};
  size_t pos = 0;
  while (pos < item.size()) {
    size_t open = item.find('[', pos);
    std::string_view literal = item.substr(pos, open == std::string_view::npos ? open : open - pos);
    if (literal.find(']') != std::string_view::npos) {
      return Status::InvalidArgument("unbalanced ']' in host list item '" + std::string(item) + "'");
    }
    for (auto& name : names) name += literal;
    if (open == std::string_view::npos) break;
    size_t close = item.find(']', open);
    if (close == std::string_view::npos) {
      return Status::InvalidArgument("unbalanced '[' in host list item '" + std::string(item) + "'");
    }
    std::string_view inner = item.substr(open + 1, close - open - 1);
    if (inner.find('[') != std::string_view::npos) {
      return Status::InvalidArgument("nested '[' in host list item '" + std::string(item) + "'");
    }
    auto expanded = ExpandRanges(inner, item);
    if (!expanded.ok()) return expanded.status();
    const std::vector<std::string>& values = *expanded;
    if (names.size() * values.size() + hosts.size() > max_hosts) {
      return Status::InvalidArgument("host list has more than " + std::to_string(max_hosts) + " hosts");
    }
    std::vector<std::string> product;
    product.reserve(names.size() * values.size());
    for (const auto& name : names) {
      for (const auto& v : values) product.push_back(name + v);
    }
    names = std::move(product);
    pos = close + 1;
  }
  if (hosts.size() + names.size() > max_hosts) {
    return Status::InvalidArgument("host list has more than " + std::to_string(max_hosts) + " hosts");
  }
  for (auto& name : names) hosts.push_back(std::move(name));
  return Status::Ok();
}

}  // namespace

Result<std::vector<std::string>> ExpandHostList(std::string_view list, size_t max_hosts) {
  if (list.empty()) return Status::InvalidArgument("empty host list");
  std::vector<std::string> hosts;
  // Split at commas outside brackets: "n[1,3],m2" is two items.
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= list.size(); ++i) {
    const char c = i < list.size() ? list[i] : ',';
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (depth < 0) return Status::InvalidArgument("unbalanced ']' in host list '" + std::string(list) + "'");
    if (c == ',' && depth == 0) {
      std::string_view item = list.substr(start, i - start);
      if (item.empty()) return Status::InvalidArgument("empty item in host list '" + std::string(list) + "'");
      for (char ch : item) {
        if (ch == ' ' || ch == '\t' || ch == '\n') {
          return Status::InvalidArgument("whitespace in host list '" + std::string(list) + "'");
        }
      }
      SCIMESH_RETURN_IF_ERROR(ExpandItem(item, max_hosts, hosts));
      start = i + 1;
    }
  }
  if (depth != 0) return Status::InvalidArgument("unbalanced '[' in host list '" + std::string(list) + "'");
  std::set<std::string_view> seen;
  for (const auto& h : hosts) {
    if (!seen.insert(h).second) return Status::InvalidArgument("host '" + h + "' appears twice in the host list");
  }
  return hosts;
}

Result<std::vector<int>> ExpandCpusPerNode(std::string_view text, size_t node_count) {
  if (text.empty()) return Status::InvalidArgument("empty cpus-per-node list");
  std::vector<int> out;
  for (std::string_view item : SplitCommas(text)) {
    // "N" or "N(xK)": K nodes with N cpus each.
    std::string_view count_text = item;
    long long repeat = 1;
    if (size_t paren = item.find('('); paren != std::string_view::npos) {
      if (item.size() < paren + 4 || item.substr(paren, 2) != "(x" || item.back() != ')') {
        return Status::InvalidArgument("bad item '" + std::string(item) + "' in cpus-per-node '" +
                                       std::string(text) + "'");
      }
      count_text = item.substr(0, paren);
      auto r = ParseInteger(item.substr(paren + 2, item.size() - paren - 3), 1, 65536);
      if (!r.ok()) {
        return Status::InvalidArgument("bad repeat in '" + std::string(item) + "' of cpus-per-node '" +
                                       std::string(text) + "'");
      }
      repeat = *r;
    }
    auto cpus = ParseInteger(count_text, 1, 1 << 20);
    if (!cpus.ok()) {
      return Status::InvalidArgument("bad cpu count in '" + std::string(item) + "' of cpus-per-node '" +
                                     std::string(text) + "'");
    }
    if (out.size() + static_cast<size_t>(repeat) > node_count) {
      return Status::InvalidArgument("cpus-per-node '" + std::string(text) + "' names more than the " +
                                     std::to_string(node_count) + " nodes of the node list");
    }
    out.insert(out.end(), static_cast<size_t>(repeat), static_cast<int>(*cpus));
  }
  if (out.size() != node_count) {
    return Status::InvalidArgument("cpus-per-node '" + std::string(text) + "' names " + std::to_string(out.size()) +
                                   " nodes but the node list has " + std::to_string(node_count));
  }
  return out;
}

Result<int> ParseGpuCount(std::string_view text) {
  std::string_view count = text.substr(text.rfind(':') == std::string_view::npos ? 0 : text.rfind(':') + 1);
  auto n = ParseInteger(count, 0, 1 << 16);
  if (!n.ok()) return Status::InvalidArgument("bad GPU count '" + std::string(text) + "'");
  return static_cast<int>(*n);
}

Result<std::chrono::system_clock::time_point> ParseSlurmTime(std::string_view text) {
  // Exactly YYYY-MM-DDTHH:MM:SS; strptime would accept looser input.
  const std::string s(text);
  auto field = [&](size_t pos, size_t len, long long lo, long long hi) {
    return s.size() == 19 ? ParseInteger(std::string_view(s).substr(pos, len), lo, hi)
                          : Result<long long>(Status::InvalidArgument("short"));
  };
  auto year = field(0, 4, 1970, 9999), month = field(5, 2, 1, 12), day = field(8, 2, 1, 31);
  auto hour = field(11, 2, 0, 23), minute = field(14, 2, 0, 59), second = field(17, 2, 0, 60);
  if (!year.ok() || !month.ok() || !day.ok() || !hour.ok() || !minute.ok() || !second.ok() || s[4] != '-' ||
      s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':') {
    return Status::InvalidArgument("'" + s + "' is not a SLURM time (YYYY-MM-DDTHH:MM:SS)");
  }
  std::tm tm{};
  tm.tm_year = static_cast<int>(*year - 1900);
  tm.tm_mon = static_cast<int>(*month - 1);
  tm.tm_mday = static_cast<int>(*day);
  tm.tm_hour = static_cast<int>(*hour);
  tm.tm_min = static_cast<int>(*minute);
  tm.tm_sec = static_cast<int>(*second);
  tm.tm_isdst = -1;  // SLURM prints local time; let the C library decide DST.
  const std::time_t t = std::mktime(&tm);
  if (t == static_cast<std::time_t>(-1)) return Status::InvalidArgument("'" + s + "' is not a valid local time");
  return std::chrono::system_clock::from_time_t(t);
}

}  // namespace scimesh::launcher

// Allocation shapes: parsing "nodes=2,time=1:00:00", SLURM's time format,
// and whether (and how many times at once) a step fits one allocation.
#include "launcher/alloc/alloc_shape.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <vector>

namespace scimesh::alloc {
namespace {

Result<int64_t> Number(std::string_view text, std::string_view what, int64_t lo, int64_t hi) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < lo || value > hi) {
    return Status(Code::kInvalidArgument, std::string(what) + " '" + std::string(text) + "' is not a number from " +
                                              std::to_string(lo) + " to " + std::to_string(hi));
  }
  return value;
}

std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == sep) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

Status BadTime(std::string_view text) {
  return Status(Code::kInvalidArgument, "time '" + std::string(text) +
                                            "' is not SLURM's M, M:S, H:M:S, D-H, D-H:M or D-H:M:S");
}

}  // namespace

Result<int64_t> ParseSlurmTime(std::string_view text) {
  int64_t days = 0;
  std::string_view rest = text;
  const bool has_days = text.find('-') != std::string_view::npos;
  if (has_days) {
    const size_t dash = text.find('-');
    auto d = Number(text.substr(0, dash), "days", 0, 365);
    if (!d.ok()) return BadTime(text);
    days = *d;
    rest = text.substr(dash + 1);
  }
  const auto parts = Split(rest, ':');
  if (parts.size() > 3) return BadTime(text);
  std::vector<int64_t> v;
  for (auto part : parts) {
    auto n = Number(part, "time part", 0, 1000000);
    if (!n.ok()) return BadTime(text);
    v.push_back(*n);
  }
  int64_t seconds = 0;
  if (has_days) {  // D-H, D-H:M, D-H:M:S
    seconds = v[0] * 3600 + (v.size() > 1 ? v[1] * 60 : 0) + (v.size() > 2 ? v[2] : 0);
  } else if (v.size() == 1) {  // M
    seconds = v[0] * 60;
  } else if (v.size() == 2) {  // M:S
    seconds = v[0] * 60 + v[1];
  } else {  // H:M:S
    seconds = v[0] * 3600 + v[1] * 60 + v[2];
  }
  return days * 86400 + seconds;
}

std::string FormatSlurmTime(int64_t seconds) {
  seconds = std::max<int64_t>(seconds, 0);
  const int64_t days = seconds / 86400, h = seconds % 86400 / 3600, m = seconds % 3600 / 60, s = seconds % 60;
  char text[48];
  if (days > 0) {
    std::snprintf(text, sizeof text, "%lld-%02lld:%02lld:%02lld", static_cast<long long>(days),
                  static_cast<long long>(h), static_cast<long long>(m), static_cast<long long>(s));
  } else {
    std::snprintf(text, sizeof text, "%02lld:%02lld:%02lld", static_cast<long long>(h), static_cast<long long>(m),
                  static_cast<long long>(s));
  }
  return text;
}

Result<Shape> ParseShape(std::string_view text) {
  Shape shape;
  bool nodes = false, time = false;
  for (auto item : Split(text, ',')) {
    const size_t eq = item.find('=');
    const auto key = item.substr(0, eq);
    const auto value = eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1);
    Result<int64_t> n = Status(Code::kInvalidArgument, "");
    if (key == "nodes") {
      n = Number(value, "nodes", 1, 10000);
      if (n.ok()) shape.nodes = *n, nodes = true;
    } else if (key == "time") {
      n = ParseSlurmTime(value);
      if (n.ok() && *n < 60) n = Status(Code::kInvalidArgument, "time '" + std::string(value) + "' is under a minute");
      if (n.ok()) shape.time_s = *n, time = true;
    } else if (key == "cores") {
      n = Number(value, "cores", 0, 100000);
      if (n.ok()) shape.cores_per_node = *n;
    } else if (key == "gpus") {
      n = Number(value, "gpus", 0, 1024);
      if (n.ok()) shape.gpus_per_node = *n;
    } else {
      return Status(Code::kInvalidArgument, "shape '" + std::string(text) + "': unknown key '" + std::string(key) +
                                                "' (nodes, time, cores, gpus)");
    }
    if (!n.ok()) return Status(Code::kInvalidArgument, "shape '" + std::string(text) + "': " + n.status().message());
  }
  if (!nodes || !time) {
    return Status(Code::kInvalidArgument, "shape '" + std::string(text) + "' needs nodes= and time=, e.g. nodes=2,time=1:00:00");
  }
  return shape;
}

std::string ShapeText(const Shape& shape) {
  std::string text = std::to_string(shape.nodes) + (shape.nodes == 1 ? " node x " : " nodes x ") +
                     FormatSlurmTime(shape.time_s);
  if (shape.cores_per_node > 0) text += " x " + std::to_string(shape.cores_per_node) + " cores";
  if (shape.gpus_per_node > 0) text += " x " + std::to_string(shape.gpus_per_node) + " gpus";
  return text;
}

std::string WhyNotFits(const Shape& shape, const Resources& r, int64_t walltime_s, int64_t margin_s) {
  if (r.nodes > shape.nodes) {
    return "needs " + std::to_string(r.nodes) + " nodes, the shape has " + std::to_string(shape.nodes);
  }
  const int64_t cores = r.ranks_per_node * r.cpus_per_rank;
  if (shape.cores_per_node > 0 && cores > shape.cores_per_node) {
    return "needs " + std::to_string(cores) + " cores per node, the shape has " + std::to_string(shape.cores_per_node);
  }
  const int64_t gpus = r.ranks_per_node * r.gpus_per_rank;
  if (gpus > shape.gpus_per_node) {
    return "needs " + std::to_string(gpus) + " gpus per node, the shape has " + std::to_string(shape.gpus_per_node);
  }
  if (walltime_s > shape.time_s - margin_s) {
    return "needs " + std::to_string(walltime_s) + " s, the shape runs steps for " +
           std::to_string(std::max<int64_t>(shape.time_s - margin_s, 0)) + " s (time " +
           FormatSlurmTime(shape.time_s) + " less the " + std::to_string(margin_s) + " s drain margin)";
  }
  return {};
}

int64_t StepsAtOnce(const Shape& shape, const Resources& r) {
  if (r.nodes > shape.nodes || r.nodes < 1) return 0;
  int64_t per_node = 1;
  const int64_t cores = r.ranks_per_node * r.cpus_per_rank;
  if (shape.cores_per_node > 0 && cores > 0) per_node = shape.cores_per_node / cores;
  const int64_t gpus = r.ranks_per_node * r.gpus_per_rank;
  if (gpus > 0) per_node = std::min(per_node, shape.gpus_per_node / gpus);
  if (per_node < 1) return 0;
  return per_node * (shape.nodes / r.nodes);
}

}  // namespace scimesh::alloc

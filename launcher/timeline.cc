// Building the timeline from events, and drawing it.
#include "launcher/timeline.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>

namespace scimesh::launcher {
namespace {

std::string Str(const rapidjson::Value& v, const char* key) {
  auto m = v.FindMember(key);
  return m != v.MemberEnd() && m->value.IsString() ? m->value.GetString() : "";
}

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

std::string Fixed(double v, int digits) {  // as printf's "%.*f", never cut short
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

}  // namespace

double Timeline::Utilization() const {
  int cpus = 0;
  for (const auto& n : nodes) cpus += n.second;
  return cpus > 0 && span > 0 ? busy_core_seconds / (cpus * span) : 0.0;
}

Result<Timeline> ParseEvents(std::string_view jsonl) {
  Timeline t;
  std::map<std::string, TimelineBar> bars;  // by lease id
  double first = -1, last = 0;
  std::istringstream in{std::string(jsonl)};
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    rapidjson::Document d;
    d.Parse(line.c_str(), line.size());
    if (d.HasParseError() || !d.IsObject() || !d.HasMember("t") || !d["t"].IsNumber()) {
      return Status::InvalidArgument("events line " + std::to_string(number) + ": not an event object");
    }
    double at = d["t"].GetDouble();
    if (first < 0) first = at;
    last = std::max(last, at);
    const std::string event = Str(d, "event"), id = Str(d, "lease_id");
    if (event == "allocation" && d.HasMember("nodes") && d["nodes"].IsArray() && t.nodes.empty()) {
      for (const auto& n : d["nodes"].GetArray()) {
        if (n.IsObject() && n.HasMember("cpus") && n["cpus"].IsInt()) t.nodes.emplace_back(Str(n, "name"), n["cpus"].GetInt());
      }
    } else if (event == "place" && !id.empty()) {
      TimelineBar& b = bars[id];
      b.lease_id = id;
      b.run_id = Str(d, "run_id");
      b.step_id = Str(d, "step_id");
      b.attempt = d.HasMember("attempt") && d["attempt"].IsInt() ? d["attempt"].GetInt() : 0;
      b.start = b.end = at;
      if (d.HasMember("nodes") && d["nodes"].IsArray()) {
        for (const auto& n : d["nodes"].GetArray()) {
          std::vector<int> cpus;
          if (n.IsObject() && n.HasMember("cpus") && n["cpus"].IsArray()) {
            for (const auto& c : n["cpus"].GetArray()) if (c.IsInt()) cpus.push_back(c.GetInt());
          }
          b.cores.emplace_back(Str(n, "name"), std::move(cpus));
        }
      }
    } else if (event == "start" && bars.count(id)) {
      bars[id].start = at;
      bars[id].end = -1;  // running
    } else if (event == "end" && bars.count(id)) {
      bars[id].end = at;
    } else if (event == "outcome" && bars.count(id)) {
      bars[id].outcome = Str(d, "outcome");
      if (bars[id].end < 0) bars[id].end = at;
    }
  }
  for (auto& [id, b] : bars) {
    if (b.end < 0) b.end = last;
    b.start -= first;
    b.end -= first;
    size_t pus = 0;
    for (const auto& c : b.cores) pus += c.second.size();
    t.busy_core_seconds += (b.end - b.start) * static_cast<double>(pus);
    t.bars.push_back(b);
  }
  std::sort(t.bars.begin(), t.bars.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
  t.span = first < 0 ? 0 : last - first;
  return t;
}

std::string TimelineSvg(const Timeline& t) {
  // One row per (node, PU); time runs left to right.
  std::vector<std::pair<std::string, int>> rows;
  std::map<std::pair<std::string, int>, size_t> row_of;
  for (const auto& [name, cpus] : t.nodes) {
    for (int c = 0; c < cpus; ++c) {
      row_of[{name, c}] = rows.size();
      rows.emplace_back(name, c);
    }
  }
  for (const auto& b : t.bars) {  // PUs the allocation event did not list
    for (const auto& [name, cpus] : b.cores) {
      for (int c : cpus) {
        if (!row_of.count({name, c})) {
          row_of[{name, c}] = rows.size();
          rows.emplace_back(name, c);
        }
      }
    }
  }
  const double left = 110, top = 50, row_h = 18, width = 900;
  const double span = t.span > 0 ? t.span : 1;
  const double height = top + row_h * static_cast<double>(rows.size()) + 50;
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << left + width + 20 << "\" height=\"" << height
    << "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  s << "<text x=\"10\" y=\"20\" font-size=\"14\">scimesh-launch timeline: " << t.bars.size() << " steps, "
    << Fixed(t.span, 1) << " s, core-time utilization " << Fixed(100 * t.Utilization(), 1) << " %</text>\n";
  for (size_t r = 0; r < rows.size(); ++r) {
    double y = top + row_h * static_cast<double>(r);
    s << "<rect x=\"" << left << "\" y=\"" << y << "\" width=\"" << width << "\" height=\"" << row_h - 2
      << "\" fill=\"#f2f2f2\"/>\n";
    s << "<text x=\"10\" y=\"" << y + row_h - 6 << "\">" << Escape(rows[r].first) << " cpu " << rows[r].second
      << "</text>\n";
  }
  std::hash<std::string> hash;
  for (const auto& b : t.bars) {
    const int hue = static_cast<int>(hash(b.step_id) % 360);
    const bool failed = !b.outcome.empty() && b.outcome != "completed";
    for (const auto& [name, cpus] : b.cores) {
      for (int c : cpus) {
        double y = top + row_h * static_cast<double>(row_of[{name, c}]);
        double x = left + width * b.start / span;
        double w = std::max(1.0, width * (b.end - b.start) / span);
        s << "<rect x=\"" << Fixed(x, 1) << "\" y=\"" << y << "\" width=\"" << Fixed(w, 1) << "\" height=\""
          << row_h - 2 << "\" fill=\"hsl(" << hue << ",60%,55%)\"" << (failed ? " stroke=\"#c00\" stroke-width=\"2\"" : "")
          << "><title>" << Escape(b.step_id) << " attempt " << b.attempt << " (" << Escape(b.outcome) << ") "
          << Fixed(b.end - b.start, 1) << " s</title></rect>\n";
      }
    }
  }
  double axis_y = top + row_h * static_cast<double>(rows.size()) + 15;
  for (int i = 0; i <= 4; ++i) {
    s << "<text x=\"" << left + width * i / 4 << "\" y=\"" << axis_y << "\">" << Fixed(span * i / 4, 1)
      << " s</text>\n";
  }
  s << "</svg>\n";
  return s.str();
}

std::string TimelineSummary(const Timeline& t) {
  std::map<std::string, int> outcomes;
  for (const auto& b : t.bars) outcomes[b.outcome.empty() ? "unfinished" : b.outcome]++;
  int cpus = 0;
  for (const auto& n : t.nodes) cpus += n.second;
  std::ostringstream s;
  s << "steps: " << t.bars.size();
  for (const auto& [o, n] : outcomes) s << ", " << o << " " << n;
  s << "\nnodes: " << t.nodes.size() << ", cpus: " << cpus << ", span: " << Fixed(t.span, 1) << " s\n";
  s << "core-time utilization: " << Fixed(100 * t.Utilization(), 1) << " % (busy "
    << Fixed(t.busy_core_seconds, 1) << " of " << Fixed(cpus * t.span, 1) << " core-seconds)\n";
  return s.str();
}

}  // namespace scimesh::launcher

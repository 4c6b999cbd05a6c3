// Building the timeline from events, and its text summary.
#include "launcher/timeline/timeline.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>

#include "protocol/util/json_io.h"

namespace scimesh::launcher {
namespace {

std::string Str(const rapidjson::Value& v, const char* key) {
  auto m = v.FindMember(key);
  return m != v.MemberEnd() && m->value.IsString() ? m->value.GetString() : "";
}

}  // namespace

std::string Fixed(double v, int digits) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(digits) << v;
  return s.str();
}

int Timeline::Cpus() const {
  int cpus = 0;
  for (const auto& n : nodes) cpus += n.second;
  return cpus;
}

double Timeline::Utilization() const {
  const int cpus = Cpus();
  return cpus > 0 && busy_span > 0 ? busy_core_seconds / (cpus * busy_span) : 0.0;
}

size_t Timeline::StepCount() const {
  std::set<std::pair<std::string, std::string>> steps;
  for (const auto& b : bars) steps.emplace(b.run_id, b.step_id);
  return steps.size();
}

std::vector<std::string> Timeline::StepIds() const {
  std::vector<std::string> ids;
  for (const auto& b : bars) {
    if (std::find(ids.begin(), ids.end(), b.step_id) == ids.end()) ids.push_back(b.step_id);
  }
  return ids;
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
    auto parsed = ParseJson(line, "events line");
    if (!parsed.ok() || !parsed->IsObject() || !parsed->HasMember("t") || !(*parsed)["t"].IsNumber()) {
      return Status::InvalidArgument("events line " + std::to_string(number) + ": not an event object");
    }
    const rapidjson::Document& d = *parsed;
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
    t.busy_span = std::max(t.busy_span, b.end);
    t.bars.push_back(b);
  }
  std::sort(t.bars.begin(), t.bars.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
  t.span = first < 0 ? 0 : last - first;
  return t;
}

std::string TimelineSummary(const Timeline& t) {
  std::map<std::string, int> outcomes;
  for (const auto& b : t.bars) outcomes[b.outcome.empty() ? "unfinished" : b.outcome]++;
  const int cpus = t.Cpus();
  std::ostringstream s;
  s << "steps: " << t.StepCount() << ", attempts: " << t.bars.size();
  const char* sep = " (";
  for (const auto& [o, n] : outcomes) {
    s << sep << o << " " << n;
    sep = ", ";
  }
  if (!outcomes.empty()) s << ")";
  s << "\nnodes: " << t.nodes.size() << ", cpus: " << cpus << ", busy span: " << Fixed(t.busy_span, 1)
    << " s, then idle: " << Fixed(t.IdleTail(), 1) << " s\n";
  s << "core-time utilization: " << Fixed(100 * t.Utilization(), 1) << " % of the busy span (busy "
    << Fixed(t.busy_core_seconds, 1) << " of " << Fixed(cpus * t.busy_span, 1) << " core-seconds)\n";
  return s.str();
}

}  // namespace scimesh::launcher

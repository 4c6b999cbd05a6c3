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

std::string TimelineBar::Owner() const { return workflow.empty() ? "run " + run_id : workflow; }

AttemptEnd EndOf(const TimelineBar& b) {
  if (b.outcome == "completed") return AttemptEnd::kCompleted;
  if (b.outcome == "failed") {
    // The launcher writes a failure's class as its detail.
    return b.detail == "preempted" || b.detail == "cancelled" ? AttemptEnd::kStopped : AttemptEnd::kFailed;
  }
  return b.outcome == "abandoned" ? AttemptEnd::kStopped : AttemptEnd::kUnknown;
}

std::string EndName(const TimelineBar& b) {
  if (b.outcome.empty()) return "unfinished";
  return b.outcome == "failed" && EndOf(b) == AttemptEnd::kStopped ? b.detail : b.outcome;
}

std::vector<TimelineStep> Timeline::Steps() const {
  std::vector<TimelineStep> steps;
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& b : bars) {
    if (seen.emplace(b.Owner(), b.step_id).second) steps.push_back({b.Owner(), b.step_id});
  }
  return steps;
}

std::vector<std::string> Timeline::Owners() const {
  std::vector<std::string> owners;
  std::set<std::string> seen;
  for (const auto& b : bars) {
    if (seen.insert(b.Owner()).second) owners.push_back(b.Owner());
  }
  return owners;
}

std::string StepLabel(const TimelineStep& step, bool name_owner) {
  return name_owner ? step.owner + " / " + step.step_id : step.step_id;
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
      b.workflow = Str(d, "workflow");
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
      bars[id].detail = Str(d, "detail");
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

namespace {

// "steps: 3, attempts: 4 (completed 3, failed 1)" for the bars `owner` names ("": all).
std::string Counts(const Timeline& t, const std::string& owner) {
  std::map<std::string, int> ends;
  std::set<std::pair<std::string, std::string>> steps;
  size_t attempts = 0;
  for (const auto& b : t.bars) {
    if (!owner.empty() && b.Owner() != owner) continue;
    ends[EndName(b)]++;
    steps.emplace(b.run_id, b.step_id);
    ++attempts;
  }
  std::ostringstream s;
  s << "steps: " << steps.size() << ", attempts: " << attempts;
  const char* sep = " (";
  for (const auto& [end, n] : ends) {
    s << sep << end << " " << n;
    sep = ", ";
  }
  if (!ends.empty()) s << ")";
  return s.str();
}

}  // namespace

std::string TimelineSummary(const Timeline& t) {
  const int cpus = t.Cpus();
  std::ostringstream s;
  s << Counts(t, "") << "\n";
  const std::vector<std::string> owners = t.Owners();
  if (owners.size() > 1) {
    for (const auto& owner : owners) s << "  " << owner << ": " << Counts(t, owner) << "\n";
  }
  s << "nodes: " << t.nodes.size() << ", cpus: " << cpus << ", busy span: " << Fixed(t.busy_span, 1)
    << " s, then idle: " << Fixed(t.IdleTail(), 1) << " s\n";
  s << "core-time utilization: " << Fixed(100 * t.Utilization(), 1) << " % of the busy span (busy "
    << Fixed(t.busy_core_seconds, 1) << " of " << Fixed(cpus * t.busy_span, 1) << " core-seconds)\n";
  return s.str();
}

}  // namespace scimesh::launcher

// Reading, checking and normalizing workflow definitions.
#include "coordinator/definition.h"

#include <algorithm>
#include <functional>
#include <set>

#include "coordinator/identifiers.h"
#include "coordinator/input_template.h"
#include "coordinator/json_text.h"

namespace scimesh::coordinator {
namespace {

std::string Indexed(const std::string& path, std::string_view name, size_t i) {
  std::string p = path.empty() ? std::string(name) : path + "." + std::string(name);
  return p + "[" + std::to_string(i) + "]";
}

void ReadResources(FieldReader& step, Resources& r) {
  const rapidjson::Value* v = step.Object("resources", Need::kOptional);
  if (v == nullptr) return;
  FieldReader res(*v, step.PathOf("resources"), step.problems());
  r.nodes = res.Int("nodes", Need::kOptional, 1, kMaxWireInt).value_or(1);
  r.ranks_per_node = res.Int("ranks_per_node", Need::kOptional, 1, kMaxWireInt).value_or(1);
  r.cpus_per_rank = res.Int("cpus_per_rank", Need::kOptional, 1, kMaxWireInt).value_or(1);
  r.gpus_per_rank = res.Int("gpus_per_rank", Need::kOptional, 0, kMaxWireInt).value_or(0);
}

void ReadRetryOn(FieldReader& step, StepDefinition& s) {
  const rapidjson::Value* arr = step.Array("retry_on", Need::kOptional, 0, 16);
  if (arr == nullptr) return;
  std::set<FailClass> classes;
  for (rapidjson::SizeType i = 0; i < arr->Size(); ++i) {
    const auto& e = (*arr)[i];
    std::optional<FailClass> c;
    if (e.IsString()) c = ParseFailClass(std::string_view(e.GetString(), e.GetStringLength()));
    if (!c || !SpendsBudget(*c)) {
      step.problems().Add(step.PathOf("retry_on") + "[" + std::to_string(i) + "]",
                          "must be a budget-spending class: retryable, timeout, cancelled, "
                          "node_failure, invalid_output or input_checksum");
      return;
    }
    classes.insert(*c);
  }
  s.retry_on.assign(classes.begin(), classes.end());
}

StepDefinition ReadStep(const rapidjson::Value& value, const std::string& path, InputProblems& problems) {
  StepDefinition s;
  FieldReader step(value, path, problems);
  s.id = step.String("id", Need::kRequired, 1, 64).value_or("");
  if (!problems.any() && !IsName(s.id)) step.Fail("id", "must be 1-64 characters of [A-Za-z0-9._-], not . or ..");
  if (const rapidjson::Value* needs = step.Array("needs", Need::kOptional, 0, 256)) {
    for (rapidjson::SizeType i = 0; i < needs->Size(); ++i) {
      const auto& n = (*needs)[i];
      if (!n.IsString() || !IsName(std::string_view(n.GetString(), n.GetStringLength()))) {
        problems.Add(step.PathOf("needs") + "[" + std::to_string(i) + "]", "must be a step id");
        break;
      }
      s.needs.emplace_back(n.GetString(), n.GetStringLength());
    }
  }
  if (const rapidjson::Value* input = step.Any("input", Need::kOptional)) {
    s.input_template = SortedKeysJson(*input);
  }
  ReadResources(step, s.resources);
  s.walltime_s = step.Int("walltime_s", Need::kOptional, 1, 604800).value_or(3600);
  s.max_attempts = step.Int("max_attempts", Need::kOptional, 1, 100).value_or(3);
  if (auto d = step.String("delivery", Need::kOptional, 1, 64)) {
    auto parsed = ParseDelivery(*d);
    if (!parsed) {
      step.Fail("delivery", "must be at_least_once or at_most_once");
    } else {
      s.delivery = *parsed;
    }
  }
  s.retry_on = DefaultRetryOn();
  ReadRetryOn(step, s);
  return s;
}

// Finds one cycle among `remaining` steps (those Kahn's algorithm could not
// order) for the message: "a -> b -> a".
std::string DescribeCycle(const WorkflowDefinition& def, const std::vector<bool>& remaining, int start) {
  std::vector<int> seen_at(def.steps.size(), -1);
  std::vector<int> path;
  int cur = start;
  while (seen_at[cur] < 0) {
    seen_at[cur] = static_cast<int>(path.size());
    path.push_back(cur);
    int next = -1;
    for (const auto& n : def.steps[cur].needs) {
      int j = def.IndexOf(n);
      if (j >= 0 && remaining[j]) {
        next = j;
        break;
      }
    }
    if (next < 0) break;  // cannot happen for a remaining node; be safe
    cur = next;
  }
  std::string out;
  for (size_t i = static_cast<size_t>(std::max(seen_at[cur], 0)); i < path.size(); ++i) {
    out += def.steps[path[i]].id + " -> ";
  }
  return out + def.steps[cur].id;
}

}  // namespace

bool StepDefinition::RetriesOn(FailClass c) const {
  return std::find(retry_on.begin(), retry_on.end(), c) != retry_on.end();
}

const StepDefinition* WorkflowDefinition::FindStep(std::string_view id) const {
  int i = IndexOf(id);
  return i < 0 ? nullptr : &steps[static_cast<size_t>(i)];
}

int WorkflowDefinition::IndexOf(std::string_view id) const {
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].id == id) return static_cast<int>(i);
  }
  return -1;
}

std::vector<FailClass> DefaultRetryOn() {
  return {FailClass::kRetryable, FailClass::kTimeout, FailClass::kCancelled,
          FailClass::kNodeFailure};
}

std::string WorkflowDefinition::CanonicalText() const {
  rapidjson::StringBuffer buf;
  JsonWriter w(buf);
  // Keys written in sorted order by hand, so the text is canonical.
  w.StartObject();
  w.Key("steps");
  w.StartArray();
  for (const auto& s : steps) {
    w.StartObject();
    w.Key("delivery");
    WriteString(w, Name(s.delivery));
    w.Key("id");
    WriteString(w, s.id);
    w.Key("input");
    WriteRawJson(w, s.input_template);
    w.Key("max_attempts");
    w.Int64(s.max_attempts);
    w.Key("needs");
    w.StartArray();
    for (const auto& n : s.needs) WriteString(w, n);
    w.EndArray();
    w.Key("resources");
    w.StartObject();
    w.Key("cpus_per_rank");
    w.Int64(s.resources.cpus_per_rank);
    w.Key("gpus_per_rank");
    w.Int64(s.resources.gpus_per_rank);
    w.Key("nodes");
    w.Int64(s.resources.nodes);
    w.Key("ranks_per_node");
    w.Int64(s.resources.ranks_per_node);
    w.EndObject();
    w.Key("retry_on");
    w.StartArray();
    for (auto c : s.retry_on) WriteString(w, Name(c));
    w.EndArray();
    w.Key("walltime_s");
    w.Int64(s.walltime_s);
    w.EndObject();
  }
  w.EndArray();
  w.Key("version");
  WriteString(w, version);
  w.Key("workflow");
  WriteString(w, workflow);
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

WorkflowDefinition ReadDefinition(const rapidjson::Value& value, const std::string& path,
                                  InputProblems& problems) {
  WorkflowDefinition def;
  FieldReader r(value, path, problems);
  def.workflow = r.String("workflow", Need::kRequired, 1, 64).value_or("");
  if (!problems.any() && !IsName(def.workflow)) r.Fail("workflow", "must be 1-64 characters of [A-Za-z0-9._-], not . or ..");
  def.version = r.String("version", Need::kRequired, 1, 64).value_or("");
  if (!problems.any() && !IsName(def.version)) r.Fail("version", "must be 1-64 characters of [A-Za-z0-9._-], not . or ..");
  const rapidjson::Value* steps = r.Array("steps", Need::kRequired, 1, 256);
  if (steps == nullptr || problems.any()) return def;
  for (rapidjson::SizeType i = 0; i < steps->Size() && !problems.any(); ++i) {
    def.steps.push_back(ReadStep((*steps)[i], Indexed(path, "steps", i), problems));
  }
  if (problems.any()) return def;
  for (size_t i = 0; i < def.steps.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (def.steps[j].id == def.steps[i].id) {
        problems.Add(Indexed(path, "steps", i) + ".id", "duplicates the id of steps[" + std::to_string(j) + "]");
        return def;
      }
    }
  }
  CheckDag(def, path, problems);
  for (size_t i = 0; i < def.steps.size() && !problems.any(); ++i) {
    std::string why = CheckTemplate(def.steps[i].input_template, def.steps[i].needs);
    if (!why.empty()) problems.Add(Indexed(path, "steps", i) + ".input", why);
  }
  return def;
}

void CheckDag(const WorkflowDefinition& def, const std::string& path, InputProblems& problems) {
  const size_t n = def.steps.size();
  std::vector<int> missing(n, 0);  // needs not yet ordered
  for (size_t i = 0; i < n; ++i) {
    const auto& needs = def.steps[i].needs;
    for (size_t k = 0; k < needs.size(); ++k) {
      std::string field = Indexed(path, "steps", i) + ".needs";
      int j = def.IndexOf(needs[k]);
      if (j < 0) {
        problems.Add(field, "names '" + needs[k] + "', which is not a step of this workflow");
        return;
      }
      if (static_cast<size_t>(j) == i) {
        problems.Add(field, "step '" + def.steps[i].id + "' needs itself");
        return;
      }
      if (std::find(needs.begin(), needs.begin() + static_cast<long>(k), needs[k]) !=
          needs.begin() + static_cast<long>(k)) {
        problems.Add(field, "names '" + needs[k] + "' twice");
        return;
      }
    }
    missing[i] = static_cast<int>(needs.size());
  }
  // Kahn's algorithm: repeatedly order the steps whose needs are all ordered.
  std::vector<bool> remaining(n, true);
  size_t ordered = 0;
  bool progress = true;
  while (progress) {
    progress = false;
    for (size_t i = 0; i < n; ++i) {
      if (!remaining[i] || missing[i] != 0) continue;
      remaining[i] = false;
      ++ordered;
      progress = true;
      for (size_t j = 0; j < n; ++j) {
        const auto& needs = def.steps[j].needs;
        if (remaining[j] && std::find(needs.begin(), needs.end(), def.steps[i].id) != needs.end()) --missing[j];
      }
    }
  }
  if (ordered == n) return;
  for (size_t i = 0; i < n; ++i) {
    if (remaining[i]) {
      problems.Add(Indexed(path, "steps", i) + ".needs",
                   "forms a cycle: " + DescribeCycle(def, remaining, static_cast<int>(i)));
      return;
    }
  }
}

Result<WorkflowDefinition> DefinitionFromCanonicalText(std::string_view text) {
  auto doc = ParseJson(text, JsonLimits{});
  if (!doc.ok()) return Status::Internal("stored definition is not JSON: " + doc.error().message);
  InputProblems problems;
  WorkflowDefinition def = ReadDefinition(*doc.value(), "", problems);
  if (problems.any()) {
    return Status::Internal("stored definition is invalid: " + problems.error().field + " " +
                            problems.error().message);
  }
  return def;
}

}  // namespace scimesh::coordinator

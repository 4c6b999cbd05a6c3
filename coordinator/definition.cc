// Reading, checking and normalizing workflow definitions.
#include "coordinator/definition.h"

#include <algorithm>
#include <functional>
#include <set>

#include "coordinator/input_template.h"
#include "coordinator/json_text.h"
#include "protocol/util/json_io.h"
#include "protocol/wire/wire_json.h"

namespace scimesh::coordinator {
namespace {

std::string Indexed(const std::string& path, std::string_view name, size_t i) {
  std::string p = path.empty() ? std::string(name) : path + "." + std::string(name);
  return p + "[" + std::to_string(i) + "]";
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
  // Keys written in sorted order by hand, so the text is canonical.
  return ObjectText([&](JsonWriter& w) {
    WriteArray(w, "steps", steps, [&](JsonWriter& sw, const StepDefinition& s) {
      sw.StartObject();
      scimesh::WriteString(sw, "delivery", Name(s.delivery));
      scimesh::WriteString(sw, "id", s.id);
      WriteRaw(sw, "input", s.input_template);
      WriteInt(sw, "max_attempts", s.max_attempts);
      WriteArray(sw, "needs", s.needs, [](JsonWriter& a, const std::string& n) { WriteString(a, n); });
      WriteObject(sw, "resources", [&](JsonWriter& r) {
        WriteInt(r, "cpus_per_rank", s.resources.cpus_per_rank);
        WriteInt(r, "gpus_per_rank", s.resources.gpus_per_rank);
        WriteInt(r, "nodes", s.resources.nodes);
        WriteInt(r, "ranks_per_node", s.resources.ranks_per_node);
      });
      WriteArray(sw, "retry_on", s.retry_on, [](JsonWriter& a, FailClass c) { WriteString(a, Name(c)); });
      WriteInt(sw, "walltime_s", s.walltime_s);
      sw.EndObject();
    });
    scimesh::WriteString(w, "version", version);
    scimesh::WriteString(w, "workflow", workflow);
  });
}

ApiResult<WorkflowDefinition> Normalize(const scimesh::WorkflowDefinition& wire, const std::string& path) {
  WorkflowDefinition def{wire.workflow, wire.version, {}};
  for (size_t i = 0; i < wire.steps.size(); ++i) {
    const scimesh::StepDefinition& w = wire.steps[i];
    StepDefinition s;
    s.id = w.id;
    s.needs = w.needs;
    if (w.input_json) {
      // Already-parsed text, so this cannot fail; be safe anyway.
      auto input = scimesh::ParseJson(*w.input_json, "input");
      if (!input.ok()) return ApiError::BadRequest(Indexed(path, "steps", i) + ".input", input.status().message());
      s.input_template = SortedKeysJson(*input);
    }
    s.resources = w.resources.value_or(Resources{});
    s.walltime_s = w.walltime_s.value_or(s.walltime_s);
    s.max_attempts = w.max_attempts.value_or(s.max_attempts);
    s.delivery = w.delivery.value_or(s.delivery);
    if (w.retry_on) {
      std::set<FailClass> classes(w.retry_on->begin(), w.retry_on->end());
      s.retry_on.assign(classes.begin(), classes.end());
    } else {
      s.retry_on = DefaultRetryOn();
    }
    def.steps.push_back(std::move(s));
  }
  if (auto dag = CheckDag(def, path); !dag.ok()) return dag.error();
  for (size_t i = 0; i < def.steps.size(); ++i) {
    std::string why = CheckTemplate(def.steps[i].input_template, def.steps[i].needs);
    if (!why.empty()) return ApiError::BadRequest(Indexed(path, "steps", i) + ".input", why);
  }
  return def;
}

ApiResult<Done> CheckDag(const WorkflowDefinition& def, const std::string& path) {
  const size_t n = def.steps.size();
  std::vector<int> missing(n, 0);  // needs not yet ordered
  for (size_t i = 0; i < n; ++i) {
    const auto& needs = def.steps[i].needs;
    for (size_t k = 0; k < needs.size(); ++k) {
      std::string field = Indexed(path, "steps", i) + ".needs";
      int j = def.IndexOf(needs[k]);
      if (j < 0) {
        return ApiError::BadRequest(field, "names '" + needs[k] + "', which is not a step of this workflow");
      }
      if (static_cast<size_t>(j) == i) {
        return ApiError::BadRequest(field, "step '" + def.steps[i].id + "' needs itself");
      }
      if (std::find(needs.begin(), needs.begin() + static_cast<long>(k), needs[k]) !=
          needs.begin() + static_cast<long>(k)) {
        return ApiError::BadRequest(field, "names '" + needs[k] + "' twice");
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
  if (ordered == n) return Done{};
  for (size_t i = 0; i < n; ++i) {
    if (remaining[i]) {
      return ApiError::BadRequest(Indexed(path, "steps", i) + ".needs",
                                  "forms a cycle: " + DescribeCycle(def, remaining, static_cast<int>(i)));
    }
  }
  return Done{};
}

Result<WorkflowDefinition> DefinitionFromCanonicalText(std::string_view text) {
  auto wire = ParseWorkflowDefinition(text);
  if (!wire.ok()) return Status::Internal("stored definition is invalid: " + wire.status().message());
  auto def = Normalize(*wire, "");
  if (!def.ok()) {
    return Status::Internal("stored definition is invalid: " + def.error().field + " " + def.error().message);
  }
  return std::move(def).value();
}

}  // namespace scimesh::coordinator

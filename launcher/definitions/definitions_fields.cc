// Refusing unknown fields in the definitions file, with a "did you mean".
#include "launcher/definitions/definitions_fields.h"

#include <algorithm>
#include <initializer_list>
#include <vector>

namespace scimesh::launcher {
namespace {

using Names = std::initializer_list<std::string_view>;

const Names kWorkflowFields = {"workflow", "version", "steps"};
const Names kStepFields = {"id",         "needs",        "input",    "resources", "walltime_s",
                               "max_attempts", "delivery", "retry_on", "run"};
const Names kResourcesFields = {"nodes", "ranks_per_node", "cpus_per_rank", "gpus_per_rank"};
const Names kRunFields = {"argv", "env", "shell", "native", "mpi", "setup", "finish"};
const Names kPartFields = {"argv", "env", "shell"};  // run.setup, run.finish

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string Join(const std::string& path, std::string_view name) {
  return path.empty() ? std::string(name) : path + "." + std::string(name);
}

// Only objects are checked here: a field of the wrong type is the typed
// parser's to report, with its own message.
Status CheckObject(const rapidjson::Value& v, const std::string& path, Names known) {
  if (!v.IsObject()) return Status::Ok();
  for (const auto& m : v.GetObject()) {
    const std::string_view name(m.name.GetString(), m.name.GetStringLength());
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    std::string why = Join(path, name) + ": unknown field";
    if (std::string near = ClosestName(name, known); !near.empty()) why += "; did you mean '" + near + "'?";
    return Status::InvalidArgument(why);
  }
  return Status::Ok();
}

const rapidjson::Value* Member(const rapidjson::Value& v, const char* name) {
  if (!v.IsObject()) return nullptr;
  auto m = v.FindMember(name);
  return m == v.MemberEnd() ? nullptr : &m->value;
}

Status CheckRun(const rapidjson::Value& run, const std::string& path) {
  if (Status s = CheckObject(run, path, kRunFields); !s.ok()) return s;
  for (const char* part : {"setup", "finish"}) {
    if (const auto* p = Member(run, part)) {
      if (Status s = CheckObject(*p, Join(path, part), kPartFields); !s.ok()) return s;
    }
  }
  return Status::Ok();
}

Status CheckWorkflow(const rapidjson::Value& wf, const std::string& path) {
  if (Status s = CheckObject(wf, path, kWorkflowFields); !s.ok()) return s;
  const auto* steps = Member(wf, "steps");
  if (steps == nullptr || !steps->IsArray()) return Status::Ok();
  for (rapidjson::SizeType i = 0; i < steps->Size(); ++i) {
    const auto& step = (*steps)[i];
    const std::string at = Join(path, "steps[" + std::to_string(i) + "]");
    if (Status s = CheckObject(step, at, kStepFields); !s.ok()) return s;
    if (const auto* r = Member(step, "resources")) {
      if (Status s = CheckObject(*r, at + ".resources", kResourcesFields); !s.ok()) return s;
    }
    if (const auto* run = Member(step, "run")) {
      if (Status s = CheckRun(*run, at + ".run"); !s.ok()) return s;
    }
  }
  return Status::Ok();
}

}  // namespace

std::string ClosestName(std::string_view name, Names known) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, name.size() / 3) + 1;
  for (std::string_view k : known) {
    if (size_t d = EditDistance(name, k); d < best_distance) {
      best_distance = d;
      best = std::string(k);
    }
  }
  return best;
}

std::string LineAndColumn(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  size_t line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(offset - line_start + 1);
}

Status CheckKnownFields(const rapidjson::Value& root) {
  const auto* workflows = Member(root, "workflows");
  if (workflows == nullptr) return CheckWorkflow(root, "");  // one workflow object
  if (Status s = CheckObject(root, "", {"workflows"}); !s.ok()) return s;
  if (!workflows->IsArray()) return Status::Ok();
  for (rapidjson::SizeType i = 0; i < workflows->Size(); ++i) {
    if (Status s = CheckWorkflow((*workflows)[i], "workflows[" + std::to_string(i) + "]"); !s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace scimesh::launcher

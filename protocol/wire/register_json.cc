// JSON for the register call: the worker and the definitions it holds.
#include <algorithm>

#include "protocol/util/json_members.h"
#include "protocol/wire/identifiers.h"
#include "protocol/wire/wire_json.h"
#include "protocol/wire/wire_json_parts.h"
#include "protocol/wire/wire_limits.h"

namespace scimesh {
namespace {

std::optional<std::string> StepIdOf(std::string_view text) {
  if (!CheckIdentifier(text, "").ok()) return std::nullopt;
  return std::string(text);
}
std::string_view TextOf(const std::string& s) { return s; }

// retry_on takes the budget-spending classes only.
std::optional<FailClass> BudgetClassOf(std::string_view text) {
  auto c = ParseFailClass(text);
  if (!c || !SpendsBudget(*c)) return std::nullopt;
  return c;
}

// A definition's resources: each member optional, with the documented
// defaults; all four are written.
constexpr auto kDefinitionResourcesMembers = [](auto& m, auto& r) {
  // Not on the wire: silently ignoring it would run 1 rank per node.
  m.Check([](const auto& o) {
    if (!o.Has("ranks")) return Status::Ok();
    return Status::InvalidField(o.FieldPath("ranks"),
                                "a total rank count is not supported; give nodes and ranks_per_node");
  });
  m.IntInOr("nodes", r.nodes, 1, kMaxWireInt, 1);
  m.IntInOr("ranks_per_node", r.ranks_per_node, 1, kMaxWireInt, 1);
  m.IntInOr("cpus_per_rank", r.cpus_per_rank, 1, kMaxWireInt, 1);
  m.IntInOr("gpus_per_rank", r.gpus_per_rank, 0, kMaxWireInt, 0);
};

constexpr auto kStepDefinitionMembers = [](auto& m, auto& s) {
  m.String("id", s.id, CheckIdentifier);
  m.Names("needs", s.needs, kMaxStepNeeds, StepIdOf, TextOf, "must be a step id");
  m.OptRaw("input", s.input_json);
  m.OptObject("resources", s.resources, kDefinitionResourcesMembers, Unset::kOmit);
  m.OptIntIn("walltime_s", s.walltime_s, 1, kMaxStepWalltimeS, Unset::kOmit);
  m.OptIntIn("max_attempts", s.max_attempts, 1, kMaxStepAttempts, Unset::kOmit);
  m.OptEnum("delivery", s.delivery, ParseDelivery, DeliveryName, "must be at_least_once or at_most_once");
  m.Names("retry_on", s.retry_on, kMaxStepRetryOn, BudgetClassOf, FailClassName,
          "must be a budget-spending class: retryable, timeout, cancelled, node_failure, invalid_output or "
          "input_checksum");
};

// Step ids are unique, and every need names a step of this workflow (the
// coordinator also refuses self-needs and cycles, with the same field).
Status CheckStepGraph(const std::vector<StepDefinition>& steps, const std::string& steps_path) {
  for (size_t j = 0; j < steps.size(); ++j) {
    for (size_t k = 0; k < j; ++k) {
      if (steps[k].id == steps[j].id) {
        return Status::InvalidField(ElementPath(steps_path, j) + ".id",
                                    "duplicates the id of steps[" + std::to_string(k) + "]");
      }
    }
  }
  for (size_t j = 0; j < steps.size(); ++j) {
    for (const std::string& need : steps[j].needs) {
      const bool known =
          std::any_of(steps.begin(), steps.end(), [&](const StepDefinition& s) { return s.id == need; });
      if (!known) {
        return Status::InvalidField(ElementPath(steps_path, j) + ".needs",
                                    "names '" + need + "', which is not a step of this workflow");
      }
    }
  }
  return Status::Ok();
}

constexpr auto kDefinitionMembers = [](auto& m, auto& d) {
  m.String("workflow", d.workflow, CheckIdentifier);
  m.String("version", d.version, CheckIdentifier);
  // At least one step: Objects bounds the count only from above.
  m.Check([](const auto& o) { return o.ArrayIn("steps", 1, kMaxWorkflowSteps).status(); });
  m.Objects("steps", d.steps, kStepDefinitionMembers, kMaxWorkflowSteps);
  m.Check([&](const auto& o) { return CheckStepGraph(d.steps, o.FieldPath("steps")); });
};

constexpr auto kRegisterMembers = [](auto& m, auto& r) {
  m.String("worker_id", r.worker_id, CheckWorkerId);
  m.StringIn("host", r.host, 1, kMaxHostBytes, CheckPrintableText);
  m.StringIn("version", r.version, 1, kMaxVersionBytes, CheckPrintableText);
  m.IntIn("concurrency", r.concurrency, 1, kMaxConcurrency);
  m.Objects("definitions", r.definitions, kDefinitionMembers, kMaxDefinitions);
  m.Check([&](const auto&) {
    for (size_t i = 0; i < r.definitions.size(); ++i) {
      for (size_t k = 0; k < i; ++k) {
        if (r.definitions[k].workflow == r.definitions[i].workflow &&
            r.definitions[k].version == r.definitions[i].version) {
          return Status::InvalidField(ElementPath("definitions", i), "repeats definitions[" + std::to_string(k) + "]");
        }
      }
    }
    return Status::Ok();
  });
};

constexpr auto kRegisterResponseMembers = [](auto& m, auto& r) {
  m.String("worker_id", r.worker_id);
  m.Int("lease_ttl_ms", r.lease_ttl_ms);
  m.Int("heartbeat_ms", r.heartbeat_ms);
  m.Check([&](const auto&) {
    if (r.lease_ttl_ms >= 1 && r.heartbeat_ms >= 1) return Status::Ok();
    return Status::InvalidArgument("register response: lease_ttl_ms and heartbeat_ms must be positive");
  });
};

}  // namespace

std::string SerializeRegisterRequest(const RegisterRequest& r) { return MembersText(r, kRegisterMembers); }

Result<RegisterRequest> ParseRegisterRequest(std::string_view json, const JsonLimits& limits) {
  return ParseMembers<RegisterRequest>(json, "register request", limits, kRegisterMembers);
}

Result<WorkflowDefinition> ParseWorkflowDefinition(std::string_view json, const JsonLimits& limits) {
  return ParseMembers<WorkflowDefinition>(json, "workflow definition", limits, kDefinitionMembers);
}

std::string SerializeRegisterResponse(const RegisterResponse& r) { return MembersText(r, kRegisterResponseMembers); }

Result<RegisterResponse> ParseRegisterResponse(std::string_view json) {
  return ParseMembers<RegisterResponse>(json, "register response", {}, kRegisterResponseMembers);
}

}  // namespace scimesh

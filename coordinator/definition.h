// Workflow definitions as workers register them (docs/protocol.md "register"):
// the steps, their `needs` DAG, input templates, resources and retry policy.
// Definitions are immutable once registered; plain values, not thread-safe to
// mutate, safe to share const.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "coordinator/api_error.h"
#include "coordinator/states.h"
#include "protocol/util/status.h"
#include "protocol/wire/wire.h"

namespace scimesh::coordinator {

// Resources is protocol/wire.h's. What one node of a step needs:
inline int64_t CpusPerNode(const Resources& r) { return r.ranks_per_node * r.cpus_per_rank; }
inline int64_t GpusPerNode(const Resources& r) { return r.ranks_per_node * r.gpus_per_rank; }

struct StepDefinition {
  std::string id;
  std::vector<std::string> needs;
  std::string input_template = "{}";  // canonical JSON text
  Resources resources;
  int64_t walltime_s = 3600;
  int64_t max_attempts = 3;
  Delivery delivery = Delivery::kAtLeastOnce;
  std::vector<FailClass> retry_on;  // sorted, unique

  bool RetriesOn(FailClass c) const;
};

struct WorkflowDefinition {
  std::string workflow;
  std::string version;
  std::vector<StepDefinition> steps;  // in registration order ("step order")

  // nullptr when the workflow has no such step.
  const StepDefinition* FindStep(std::string_view id) const;
  // Index in `steps`, or -1.
  int IndexOf(std::string_view id) const;
  // The normalized definition (defaults filled in, keys sorted) as JSON text:
  // two registrations are "the same content" iff their texts are equal.
  std::string CanonicalText() const;
};

// The default `retry_on`: retryable, timeout, cancelled, node_failure.
std::vector<FailClass> DefaultRetryOn();

// A definition as registered (protocol/wire.h's, already checked by
// ParseRegisterRequest for types, ranges and identifiers) in its normalized
// form: defaults filled in, `retry_on` sorted, the input template's keys
// sorted. Refuses, naming the field under `path` ("definitions[0]"), what the
// wire parser does not check: a step needing itself or a step twice, a cycle,
// an input template that references a step outside its needs.
ApiResult<WorkflowDefinition> Normalize(const scimesh::WorkflowDefinition& wire, const std::string& path);

// Checks the `needs` graph: every need names another step of the workflow,
// no step is listed twice, no cycles. The refusal's field is
// `<path>.steps[i].needs`.
ApiResult<Done> CheckDag(const WorkflowDefinition& def, const std::string& path);

// Reads a definition back from its CanonicalText() (as stored).
Result<WorkflowDefinition> DefinitionFromCanonicalText(std::string_view text);

}  // namespace scimesh::coordinator

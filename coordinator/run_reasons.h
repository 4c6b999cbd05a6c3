// Why a run and its steps ended (docs/protocol.md "Runs", why it ended): the
// run's `reason` and the `error` of each failed or cancelled step, from the
// step_failed events of its journal and the `needs` of its definition.
// ExplainRunEnd is pure; ReadStepFailures reads the ledger's database inside
// its transaction (one thread at a time, as every ledger call).
#pragma once

#include <string>
#include <vector>

#include "coordinator/database.h"
#include "coordinator/definition.h"
#include "protocol/wire/wire.h"

namespace scimesh::coordinator {

// One step_failed event: the step and its detail's class and message.
struct StepFailure {
  std::string step_id;
  std::string error_class;
  std::string message;
};

// The step_failed events of `run_id`, in journal order.
Result<std::vector<StepFailure>> ReadStepFailures(Database& db, std::string_view run_id);

// Sets run.reason and the error_json of every failed or cancelled step of
// `run` from `failures` (journal order) and the needs in `def` (nullptr: an
// unreadable definition; needs are then not followed).
void ExplainRunEnd(const std::vector<StepFailure>& failures, const WorkflowDefinition* def, RunView& run);

}  // namespace scimesh::coordinator

// Which registered steps the allocation can never run, in the shared wording.
#include "launcher/placement/unfittable_steps.h"

#include "protocol/wire/offer_fit.h"

namespace scimesh::launcher {

std::vector<std::string> UnfittableSteps(const std::vector<WorkflowDefinition>& definitions,
                                         const FreeCapacity& whole) {
  std::vector<std::string> out;
  for (const WorkflowDefinition& def : definitions) {
    for (const StepDefinition& step : def.steps) {
      auto why = WhyNoOfferFits(step.resources.value_or(Resources{}), step.walltime_s.value_or(kDefaultStepWalltimeS),
                                {whole});
      if (why) out.push_back(step.id + " (" + def.workflow + "@" + def.version + "): " + *why);
    }
  }
  return out;
}

std::string UnfittableTail(const std::vector<std::string>& steps) {
  if (steps.empty()) return "";
  std::string tail = "; cannot fit this allocation: ";
  for (size_t i = 0; i < steps.size(); ++i) tail += (i > 0 ? "; " : "") + steps[i];
  return tail;
}

}  // namespace scimesh::launcher

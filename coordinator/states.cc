// Terminality rules over the protocol's state and class names.
#include "coordinator/states.h"

namespace scimesh::coordinator {

bool IsTerminal(AttemptState s) {
  return s != AttemptState::kLeased && s != AttemptState::kRunning && s != AttemptState::kOrphaned;
}

bool IsTerminal(RunState s) { return s != RunState::kRunning; }

}  // namespace scimesh::coordinator

// Steps this launcher registers but can never run: each needs more nodes,
// cpus or gpus per node, or walltime than the whole allocation offers
// (docs/launcher.md "Steps that cannot fit"). Named at registration and in
// the idle-exit line, so a step that stays `queued` is not silent.
//
// Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "protocol/wire/wire.h"

namespace scimesh::launcher {

// The walltime a step asks for when its definition leaves it out (the
// coordinator's documented default, docs/protocol.md "register").
inline constexpr int64_t kDefaultStepWalltimeS = 3600;

// One line per step of `definitions` that does not fit `whole` (the claim
// `free` of the idle allocation), in definition order:
// "big (mesh-study@1): needs 3 nodes, largest offer 2".
std::vector<std::string> UnfittableSteps(const std::vector<WorkflowDefinition>& definitions,
                                         const FreeCapacity& whole);

// "; cannot fit this allocation: a (wf@1): ...; b (wf@1): ..." or "" when
// `steps` is empty: the tail of the idle-exit line.
std::string UnfittableTail(const std::vector<std::string>& steps);

}  // namespace scimesh::launcher

// Each node's own hardware: one `srun` step, once at start, runs lstopo on
// every other node of the allocation and prints its hwloc XML, so that steps
// are placed on their nodes' own topologies (mixed node types), not on a copy
// of the launcher's node.
//
// Pure functions except ProbeNodes, which runs the command it is given;
// all are thread-safe.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "launcher/allocation/allocation.h"
#include "launcher/placement/topology.h"
#include "protocol/util/status.h"

namespace scimesh::launcher {

// The srun command that probes `nodes` (one task on each, the job's whole
// share of the node, overlapping any step): each task prints "node=<name>"
// and then `lstopo-no-graphics --whole-system --of xml -`, every line
// labelled "<task>: " by srun --label.
std::vector<std::string> ProbeCommand(const std::string& srun, const std::vector<std::string>& nodes);

// Splits ProbeCommand's output into each node's XML, by node name.
// InvalidArgument when a line is not labelled, or a task names no node or
// the same node as another task.
Result<std::map<std::string, std::string>> SplitProbeOutput(std::string_view labelled);

// Runs argv and returns its standard output (CommandOutput, or a fake).
using CommandRunner = std::function<Result<std::string>(const std::vector<std::string>& argv)>;

struct ProbedNodes {
  std::map<std::string, std::shared_ptr<const Topology>> topologies;  // by node name
  // One line per node left to the homogeneous assumption and why (the
  // whole probe failing is one line); empty when every node was probed.
  std::vector<std::string> problems;
};

// Probes every node of `allocation` but this one. Never fails: a node whose
// probe fails or whose XML does not load is listed in `problems` (and
// placed as if it were like this node).
ProbedNodes ProbeNodes(const Allocation& allocation, const std::string& srun, const CommandRunner& run);

}  // namespace scimesh::launcher

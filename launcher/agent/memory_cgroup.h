// The memory cgroup a process runs in, as the kernel's OOM killer counts
// it: how many processes it killed there and under which limit. A node
// agent (or a launcher) reads it when a step starts and when it ends; a step
// killed by SIGKILL while the count rose was killed by the allocation's
// memory limit (SLURM's ConstrainRAMSpace), not by a person or a fault.
//
// cgroup v1: the `memory` hierarchy; each cgroup on the path counts the kills
// of its own limit (memory.oom_control `oom_kill`), so the path's counts are
// summed. cgroup v2: memory.events `oom_kill` counts a cgroup's whole subtree,
// so the path's largest is taken. The limit is the smallest on the path.
//
// Free functions; thread-safe (they read files).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace scimesh::agent {

struct MemoryCgroup {
  int64_t oom_kills = 0;    // see above
  int64_t limit_bytes = 0;  // the smallest limit on the path; 0 when none is set
};

// The memory cgroup of this process (/proc/self/cgroup, /proc/self/mounts);
// nullopt when it has none that can be read.
std::optional<MemoryCgroup> ReadOwnMemoryCgroup();

// The same from given texts: `proc_cgroup` as /proc/PID/cgroup reads,
// `mounts` as /proc/self/mounts reads (mount points are read from disk).
std::optional<MemoryCgroup> ReadMemoryCgroup(std::string_view proc_cgroup, std::string_view mounts);

// The memory limit that killed a step, in MiB (at least 1), when `after`
// counts more OOM kills than `before` and the step died of SIGKILL; else 0.
// A step killed that way with no limit on the path gives -1 (the machine
// ran out of memory).
int64_t MemoryLimitKillMib(const std::optional<MemoryCgroup>& before, const std::optional<MemoryCgroup>& after,
                           bool signaled, int code);

}  // namespace scimesh::agent

// scimesh-alloc's state directory: made private, locked by one instance;
// its workflows, locked by one instance of the user; and the node CPUs a
// shape gets when it does not say.
#pragma once

#include <string>
#include <vector>

#include "protocol/util/status.h"

namespace scimesh::alloc {

// Creates `dir` and `dir`/jobs (0700) when missing; refuses a directory of
// another user or open to group or others.
Status MakeStateDir(const std::string& dir);

// Holds `dir`/lock (flock) for the process's life and writes its pid there.
// kConflict "another scimesh-alloc (pid N) uses DIR" when one holds it.
Status LockStateDir(const std::string& dir);

// Holds `locks_dir`/alloc-WORKFLOW for each workflow (names as the
// protocol allows them: no '/'), creating `locks_dir` (0700) when missing.
// kConflict "another scimesh-alloc (pid N) serves workflow W" when another
// instance of this user holds one, whatever its name or state directory.
Status LockWorkflows(const std::vector<std::string>& workflows, const std::string& locks_dir);

// Whether a process holds `dir`/lock now (false when there is no lock file).
bool StateDirLocked(const std::string& dir);

// The fewest CPUs a node of `partition` (empty: the default one) has:
// sinfo -h [-p P] -o %c. Unavailable naming sinfo's error.
Result<long long> PartitionNodeCpus(const std::string& partition);

}  // namespace scimesh::alloc

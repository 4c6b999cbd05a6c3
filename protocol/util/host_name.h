// HostName: this machine's name, as every scimesh component writes and
// compares it (the lease state file's `host`, worker ids, allocation nodes).
#pragma once

#include <string>

namespace scimesh {

// gethostname(); "unknown" when it cannot be read. Thread-safe.
std::string HostName();

}  // namespace scimesh

// The coordinator's rules over the protocol's closed name sets: which fail
// classes spend the retry budget, which states are terminal. The sets and
// their wire spellings are protocol/wire.h's (one table, shared with the
// client); Name() is a short spelling for the ledger's many uses.
#pragma once

#include <string_view>

#include "protocol/wire/wire.h"

namespace scimesh::coordinator {

inline std::string_view Name(Delivery d) { return DeliveryName(d); }
inline std::string_view Name(FailClass c) { return FailClassName(c); }
inline std::string_view Name(AttemptState s) { return AttemptStateName(s); }
inline std::string_view Name(RunState s) { return RunStateName(s); }

// SpendsBudget (the classes a retry budget counts) is protocol/wire.h's.
// Every attempt state but leased, running and orphaned.
bool IsTerminal(AttemptState s);
bool IsTerminal(RunState s);

// Error class the coordinator records itself when a lease expires past its
// grace window (never sent by a worker).
inline constexpr std::string_view kLeaseExpiredClass = "lease_expired";

}  // namespace scimesh::coordinator

// The closed sets of names the protocol uses (docs/protocol.md "State
// machines", "fail"): attempt, step and run states, delivery and failure
// classes, each with its one wire spelling.
#pragma once

#include <optional>
#include <string_view>

namespace scimesh::coordinator {

enum class Delivery { kAtLeastOnce, kAtMostOnce };

enum class FailureClass {
  kRetryable,
  kTimeout,
  kCancelled,
  kNodeFailure,
  kInvalidOutput,
  kInputChecksum,
  kFatal,
  kUnservable,
  kPreempted,
};

enum class AttemptState { kLeased, kRunning, kOrphaned, kCompleted, kFailed, kExpired, kCancelled };

enum class RunState { kRunning, kCompleted, kFailed, kTimedOut, kCancelled };

std::string_view Name(Delivery d);
std::string_view Name(FailureClass c);
std::string_view Name(AttemptState s);
std::string_view Name(RunState s);

std::optional<Delivery> ParseDelivery(std::string_view s);
std::optional<FailureClass> ParseFailureClass(std::string_view s);
std::optional<AttemptState> ParseAttemptState(std::string_view s);
std::optional<RunState> ParseRunState(std::string_view s);

// Classes that spend the retry budget (all but fatal, unservable, preempted).
bool SpendsBudget(FailureClass c);
// Every attempt state but leased, running and orphaned.
bool IsTerminal(AttemptState s);
bool IsTerminal(RunState s);

// Error class the coordinator records itself when a lease expires past its
// grace window (never sent by a worker).
inline constexpr std::string_view kLeaseExpiredClass = "lease_expired";

}  // namespace scimesh::coordinator

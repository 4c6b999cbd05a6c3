// Wire spellings of the protocol's closed name sets, both ways.
#include "coordinator/states.h"

#include <array>
#include <utility>

namespace scimesh::coordinator {
namespace {

template <typename E, size_t N>
std::optional<E> Lookup(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view s) {
  for (const auto& [e, name] : table) {
    if (name == s) return e;
  }
  return std::nullopt;
}

template <typename E, size_t N>
std::string_view NameIn(const std::array<std::pair<E, std::string_view>, N>& table, E e) {
  for (const auto& [v, name] : table) {
    if (v == e) return name;
  }
  return "unknown";
}

constexpr std::array<std::pair<Delivery, std::string_view>, 2> kDeliveries{{
    {Delivery::kAtLeastOnce, "at_least_once"},
    {Delivery::kAtMostOnce, "at_most_once"},
}};

constexpr std::array<std::pair<FailureClass, std::string_view>, 9> kClasses{{
    {FailureClass::kRetryable, "retryable"},
    {FailureClass::kTimeout, "timeout"},
    {FailureClass::kCancelled, "cancelled"},
    {FailureClass::kNodeFailure, "node_failure"},
    {FailureClass::kInvalidOutput, "invalid_output"},
    {FailureClass::kInputChecksum, "input_checksum"},
    {FailureClass::kFatal, "fatal"},
    {FailureClass::kUnservable, "unservable"},
    {FailureClass::kPreempted, "preempted"},
}};

constexpr std::array<std::pair<AttemptState, std::string_view>, 7> kAttemptStates{{
    {AttemptState::kLeased, "leased"},
    {AttemptState::kRunning, "running"},
    {AttemptState::kOrphaned, "orphaned"},
    {AttemptState::kCompleted, "completed"},
    {AttemptState::kFailed, "failed"},
    {AttemptState::kExpired, "expired"},
    {AttemptState::kCancelled, "cancelled"},
}};

constexpr std::array<std::pair<RunState, std::string_view>, 5> kRunStates{{
    {RunState::kRunning, "running"},
    {RunState::kCompleted, "completed"},
    {RunState::kFailed, "failed"},
    {RunState::kTimedOut, "timed_out"},
    {RunState::kCancelled, "cancelled"},
}};

}  // namespace

std::string_view Name(Delivery d) { return NameIn(kDeliveries, d); }
std::string_view Name(FailureClass c) { return NameIn(kClasses, c); }
std::string_view Name(AttemptState s) { return NameIn(kAttemptStates, s); }
std::string_view Name(RunState s) { return NameIn(kRunStates, s); }

std::optional<Delivery> ParseDelivery(std::string_view s) { return Lookup(kDeliveries, s); }
std::optional<FailureClass> ParseFailureClass(std::string_view s) { return Lookup(kClasses, s); }
std::optional<AttemptState> ParseAttemptState(std::string_view s) { return Lookup(kAttemptStates, s); }
std::optional<RunState> ParseRunState(std::string_view s) { return Lookup(kRunStates, s); }

bool SpendsBudget(FailureClass c) {
  return c != FailureClass::kFatal && c != FailureClass::kUnservable && c != FailureClass::kPreempted;
}

bool IsTerminal(AttemptState s) {
  return s != AttemptState::kLeased && s != AttemptState::kRunning && s != AttemptState::kOrphaned;
}

bool IsTerminal(RunState s) { return s != RunState::kRunning; }

}  // namespace scimesh::coordinator

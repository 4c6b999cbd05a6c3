// Wire spellings of the protocol's closed sets: 409 reasons, fail classes,
// delivery, attempt and run states. The one table of each, for the client and
// the coordinator.
#include "protocol/util/enum_names.h"
#include "protocol/wire/wire.h"

namespace scimesh {
namespace {

constexpr EnumNames<RefusalReason, 4> kReasons{{
    {RefusalReason::kAlreadyApplied, "already_applied"},
    {RefusalReason::kFenced, "fenced"},
    {RefusalReason::kRunTerminal, "run_terminal"},
    {RefusalReason::kNotStarted, "not_started"},
}};

constexpr EnumNames<FailClass, 10> kClasses{{
    {FailClass::kRetryable, "retryable"},
    {FailClass::kTimeout, "timeout"},
    {FailClass::kCancelled, "cancelled"},
    {FailClass::kNodeFailure, "node_failure"},
    {FailClass::kInvalidOutput, "invalid_output"},
    {FailClass::kInputChecksum, "input_checksum"},
    {FailClass::kFatal, "fatal"},
    {FailClass::kUnservable, "unservable"},
    {FailClass::kPreempted, "preempted"},
    {FailClass::kStorageFull, "storage_full"},
}};

constexpr EnumNames<Delivery, 2> kDeliveries{{
    {Delivery::kAtLeastOnce, "at_least_once"},
    {Delivery::kAtMostOnce, "at_most_once"},
}};

constexpr EnumNames<AttemptState, 7> kAttemptStates{{
    {AttemptState::kLeased, "leased"},
    {AttemptState::kRunning, "running"},
    {AttemptState::kOrphaned, "orphaned"},
    {AttemptState::kCompleted, "completed"},
    {AttemptState::kFailed, "failed"},
    {AttemptState::kExpired, "expired"},
    {AttemptState::kCancelled, "cancelled"},
}};

constexpr EnumNames<RunState, 5> kRunStates{{
    {RunState::kRunning, "running"},
    {RunState::kCompleted, "completed"},
    {RunState::kFailed, "failed"},
    {RunState::kTimedOut, "timed_out"},
    {RunState::kCancelled, "cancelled"},
}};

}  // namespace

std::string_view RefusalReasonName(RefusalReason reason) { return NameOf(kReasons, reason); }
std::optional<RefusalReason> ParseRefusalReason(std::string_view name) {
  return ValueOf(kReasons, name);
}
std::string_view FailClassName(FailClass cls) { return NameOf(kClasses, cls); }
std::optional<FailClass> ParseFailClass(std::string_view name) { return ValueOf(kClasses, name); }
bool SpendsBudget(FailClass c) {
  return c != FailClass::kFatal && c != FailClass::kUnservable && c != FailClass::kPreempted &&
         c != FailClass::kStorageFull;
}
bool StepMayReport(FailClass c) {
  return c == FailClass::kRetryable || c == FailClass::kTimeout || c == FailClass::kInvalidOutput ||
         c == FailClass::kInputChecksum || c == FailClass::kFatal;
}
std::string_view DeliveryName(Delivery delivery) { return NameOf(kDeliveries, delivery); }
std::optional<Delivery> ParseDelivery(std::string_view name) { return ValueOf(kDeliveries, name); }
std::string_view AttemptStateName(AttemptState state) { return NameOf(kAttemptStates, state); }
std::optional<AttemptState> ParseAttemptState(std::string_view name) {
  return ValueOf(kAttemptStates, name);
}
std::string_view RunStateName(RunState state) { return NameOf(kRunStates, state); }
std::optional<RunState> ParseRunState(std::string_view name) { return ValueOf(kRunStates, name); }

}  // namespace scimesh

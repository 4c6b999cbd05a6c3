// Wire spellings of the protocol's closed sets: 409 reasons, fail classes, delivery.
#include <array>
#include <utility>

#include "protocol/wire.h"

namespace scimesh {
namespace {

constexpr std::array<std::pair<RefusalReason, std::string_view>, 4> kReasons{{
    {RefusalReason::kAlreadyApplied, "already_applied"},
    {RefusalReason::kFenced, "fenced"},
    {RefusalReason::kRunTerminal, "run_terminal"},
    {RefusalReason::kNotStarted, "not_started"},
}};

constexpr std::array<std::pair<FailClass, std::string_view>, 9> kClasses{{
    {FailClass::kRetryable, "retryable"},
    {FailClass::kTimeout, "timeout"},
    {FailClass::kCancelled, "cancelled"},
    {FailClass::kNodeFailure, "node_failure"},
    {FailClass::kInvalidOutput, "invalid_output"},
    {FailClass::kInputChecksum, "input_checksum"},
    {FailClass::kFatal, "fatal"},
    {FailClass::kUnservable, "unservable"},
    {FailClass::kPreempted, "preempted"},
}};

constexpr std::array<std::pair<Delivery, std::string_view>, 2> kDeliveries{{
    {Delivery::kAtLeastOnce, "at_least_once"},
    {Delivery::kAtMostOnce, "at_most_once"},
}};

template <typename E, size_t N>
std::string_view NameOf(const std::array<std::pair<E, std::string_view>, N>& table, E value) {
  for (const auto& [e, name] : table) {
    if (e == value) return name;
  }
  return "unknown";
}

template <typename E, size_t N>
std::optional<E> ValueOf(const std::array<std::pair<E, std::string_view>, N>& table,
                         std::string_view name) {
  for (const auto& [e, n] : table) {
    if (n == name) return e;
  }
  return std::nullopt;
}

}  // namespace

std::string_view RefusalReasonName(RefusalReason reason) { return NameOf(kReasons, reason); }
std::optional<RefusalReason> ParseRefusalReason(std::string_view name) {
  return ValueOf(kReasons, name);
}
std::string_view FailClassName(FailClass cls) { return NameOf(kClasses, cls); }
std::optional<FailClass> ParseFailClass(std::string_view name) { return ValueOf(kClasses, name); }
std::string_view DeliveryName(Delivery delivery) { return NameOf(kDeliveries, delivery); }
std::optional<Delivery> ParseDelivery(std::string_view name) { return ValueOf(kDeliveries, name); }

}  // namespace scimesh

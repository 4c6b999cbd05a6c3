// Status and Result<T>: errors as values that say what failed and why.
//
// Every fallible function in scimesh returns a Status (no value) or a
// Result<T> (a value or a Status). Nothing in scimesh throws across a module
// boundary; exceptions from libraries are caught at main(), thread entry
// points and every extern "C" function and turned into a Status.
// Both types are plain values: copyable, movable, not thread-safe to mutate
// concurrently (like any value).
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace scimesh {

// What kind of failure. Stable: callers switch on it.
enum class Code {
  kOk = 0,
  kInvalidArgument,   // the caller's input is malformed or out of range
  kNotFound,          // a named thing does not exist
  kAlreadyExists,     // a named thing exists and must not be replaced
  kPermissionDenied,  // credentials missing or insufficient
  kConflict,          // a protocol 409 or an illegal state change
  kUnavailable,       // a peer or service cannot be reached right now
  kTimeout,           // a deadline passed
  kCancelled,         // the operation was cancelled on purpose
  kIo,                // a local file or system call failed
  kDataLoss,          // content does not match what was promised (checksum)
  kInternal,          // a bug: an invariant was broken
  kResourceExhausted, // a store or a quota is full (the coordinator's 507)
};

// The name of a code as written in logs and docs, e.g. "invalid_argument".
std::string_view CodeName(Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
  static Status NotFound(std::string m) { return {Code::kNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {Code::kAlreadyExists, std::move(m)}; }
  static Status PermissionDenied(std::string m) { return {Code::kPermissionDenied, std::move(m)}; }
  static Status Conflict(std::string m) { return {Code::kConflict, std::move(m)}; }
  static Status Unavailable(std::string m) { return {Code::kUnavailable, std::move(m)}; }
  static Status Timeout(std::string m) { return {Code::kTimeout, std::move(m)}; }
  static Status Cancelled(std::string m) { return {Code::kCancelled, std::move(m)}; }
  static Status Io(std::string m) { return {Code::kIo, std::move(m)}; }
  static Status DataLoss(std::string m) { return {Code::kDataLoss, std::move(m)}; }
  static Status Internal(std::string m) { return {Code::kInternal, std::move(m)}; }
  static Status ResourceExhausted(std::string m) { return {Code::kResourceExhausted, std::move(m)}; }
  // kInvalidArgument about one field of a message, by its path
  // ("free.nodes[1].cpus"; "" for the message as a whole): message() is
  // "<field>: <why>" (or "<why>"), and field()/why() keep the parts for a
  // reply that names the field (the coordinator's 400 `field`).
  static Status InvalidField(std::string field, std::string why);

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // Set only by InvalidField (WithContext keeps them): the field's path and
  // the reason without the path.
  const std::optional<std::string>& field() const { return field_; }
  const std::string& why() const { return why_; }

  // "invalid_argument: field 'max' must be 1..64"; "ok" when OK.
  std::string ToString() const;

  // Returns a copy whose message is "<context>: <message>".
  Status WithContext(std::string_view context) const;

  friend bool operator==(const Status& a, const Status& b) {
    return a.code_ == b.code_ && a.message_ == b.message_;
  }

 private:
  Code code_ = Code::kOk;
  std::string message_;
  std::optional<std::string> field_;
  std::string why_;
};

// A value of type T, or the Status that says why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT: implicit by design
    assert(!std::get<Status>(v_).ok() && "Result built from an OK Status has no value");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }

  // The error; Status::Ok() when there is a value.
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(v_); }

  // Precondition: ok().
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  T value_or(T fallback) const { return ok() ? std::get<T>(v_) : std::move(fallback); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace scimesh

// Returns the Status from the enclosing function when `expr` is not OK.
#define SCIMESH_RETURN_IF_ERROR(expr)                 \
  do {                                                \
    ::scimesh::Status scimesh_status_ = (expr);       \
    if (!scimesh_status_.ok()) return scimesh_status_; \
  } while (0)

// `lhs = value of expr` when `expr` (a Result) holds one; otherwise returns its
// Status from the enclosing function. `lhs` may declare: `SCIMESH_ASSIGN_OR_RETURN(auto x, F());`
#define SCIMESH_ASSIGN_OR_RETURN(lhs, expr) \
  SCIMESH_ASSIGN_OR_RETURN_IMPL_(SCIMESH_CONCAT_(scimesh_result_, __LINE__), lhs, expr)
#define SCIMESH_CONCAT_INNER_(a, b) a##b
#define SCIMESH_CONCAT_(a, b) SCIMESH_CONCAT_INNER_(a, b)
// `tmp` and `lhs` name or declare variables, so they cannot be parenthesized there.
#define SCIMESH_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr)                                   \
  auto tmp = (expr); /* NOLINT(bugprone-macro-parentheses): declares tmp */              \
  if (!(tmp).ok()) return (tmp).status();                                                \
  lhs = std::move(tmp).value() /* NOLINT(bugprone-macro-parentheses): lhs may declare */

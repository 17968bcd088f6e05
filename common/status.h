#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace det {

// Error categories, modelled on gRPC's canonical codes so they map cleanly onto the CLI gateway's
// status field and, later, HTTP statuses.
enum class StatusCode {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kAlreadyExists,
  kFailedPrecondition,
  kPermissionDenied,
  kUnauthenticated,
  kResourceExhausted,
  kDeadlineExceeded,
  kUnavailable,
  kInternal,
};

std::string_view StatusCodeName(StatusCode code);

// The outcome of an operation that returns nothing. A non-OK status carries a message that a user
// can act on ("bus.agent_port: 70000 is not a port; allowed: 0..65535").
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }
  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "INVALID_ARGUMENT: message", or "OK".
  std::string ToString() const;
  // Returns a status with the same code whose message is "context: message".
  Status WithContext(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) {
  return {StatusCode::kInvalidArgument, std::move(m)};
}
inline Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
inline Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
inline Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
inline Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
inline Status PermissionDenied(std::string m) {
  return {StatusCode::kPermissionDenied, std::move(m)};
}
inline Status Unauthenticated(std::string m) {
  return {StatusCode::kUnauthenticated, std::move(m)};
}
inline Status DeadlineExceeded(std::string m) {
  return {StatusCode::kDeadlineExceeded, std::move(m)};
}
inline Status FailedPrecondition(std::string m) {
  return {StatusCode::kFailedPrecondition, std::move(m)};
}

// A value or the error that explains why there is none: a Status (the default), or a richer
// error type where callers react to more than a code (a cloud API's error: cloud_error.h).
// Accessing value() of an error result, or error() of a value, is a broken invariant and aborts
// (in every build type).
template <typename T, typename E = Status>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(E error) : state_(std::move(error)) {   // NOLINT(google-explicit-constructor)
    if constexpr (std::is_same_v<E, Status>) {
      if (std::get<Status>(state_).ok()) std::abort();  // an OK status carries no value
    }
  }

  bool ok() const { return std::holds_alternative<T>(state_); }
  // The Status of a Result<T>: OK with a value.
  const Status& status() const requires std::is_same_v<E, Status> {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(state_);
  }
  const E& error() const {
    if (ok()) std::abort();
    return std::get<E>(state_);
  }
  T& value() & { return Checked(); }
  const T& value() const& { return const_cast<Result*>(this)->Checked(); }
  T&& value() && { return std::move(Checked()); }
  T* operator->() { return &Checked(); }
  const T* operator->() const { return &const_cast<Result*>(this)->Checked(); }
  T& operator*() & { return Checked(); }
  const T& operator*() const& { return const_cast<Result*>(this)->Checked(); }
  // The value, or `otherwise` when there is none.
  T value_or(T otherwise) const& { return ok() ? std::get<T>(state_) : std::move(otherwise); }

 private:
  T& Checked() {
    if (!ok()) std::abort();
    return std::get<T>(state_);
  }
  std::variant<T, E> state_;
};

}  // namespace det

// Evaluates `expr` (a Status); returns it from the enclosing function if it is not OK.
#define DET_RETURN_IF_ERROR(expr)              \
  do {                                         \
    ::det::Status det_status_ = (expr);        \
    if (!det_status_.ok()) return det_status_; \
  } while (false)

// NOLINTBEGIN(bugprone-macro-parentheses): `lhs` is a declaration and `tmp` a name; neither can
// be parenthesized.
#define DET_CONCAT_INNER(a, b) a##b
#define DET_CONCAT(a, b) DET_CONCAT_INNER(a, b)
// Declares `lhs` from a Result<T> expression, or returns its Status from the enclosing function.
#define DET_ASSIGN_OR_RETURN(lhs, expr) \
  DET_ASSIGN_OR_RETURN_IMPL(DET_CONCAT(det_result_, __LINE__), lhs, expr)
#define DET_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()
// NOLINTEND(bugprone-macro-parentheses)

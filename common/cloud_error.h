#pragma once

// What a failed cloud API call means for its caller, whichever cloud it was (EC2, Compute
// Engine), and a value-or-error type for the calls' results.

#include <string_view>
#include <utility>
#include <variant>

namespace det {

enum class CloudErrorKind {
  kThrottled,  // the API's rate limit (EC2 RequestLimitExceeded, HTTP 429): slow down
  kCapacity,   // no capacity of this kind here now: try later or elsewhere
  kQuota,      // the account's limit: try another kind, or ask for more
  kAuth,       // credentials missing, wrong or without the permission
  kNotFound,   // the instance, request or operation does not exist (any more)
  kInvalid,    // any other refusal: the request (or the config behind it) is wrong
  kTransient,  // 5xx, transport failures and timeouts: retry
};
std::string_view CloudErrorKindName(CloudErrorKind kind);  // "throttled", "not_found", ...

// A value, or the error `E` that prevented it (C++23's std::expected, in miniature).
template <class T, class E>
class Expected {
 public:
  Expected(T value) : state_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Expected(E error) : state_(std::move(error)) {}  // NOLINT(google-explicit-constructor)
  bool ok() const { return state_.index() == 0; }
  const T& value() const { return std::get<0>(state_); }
  T& value() { return std::get<0>(state_); }
  const E& error() const { return std::get<1>(state_); }

 private:
  std::variant<T, E> state_;
};

}  // namespace det

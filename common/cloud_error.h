#pragma once

// What a failed cloud API call means for its caller, whichever cloud it was (EC2, Compute
// Engine). The calls' results are Result<T, the cloud's error> (status.h).

#include <string_view>

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

}  // namespace det

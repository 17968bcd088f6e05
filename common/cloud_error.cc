#include "common/cloud_error.h"

namespace det {

std::string_view CloudErrorKindName(CloudErrorKind kind) {
  switch (kind) {
    case CloudErrorKind::kThrottled:
      return "throttled";
    case CloudErrorKind::kCapacity:
      return "capacity";
    case CloudErrorKind::kQuota:
      return "quota";
    case CloudErrorKind::kAuth:
      return "auth";
    case CloudErrorKind::kNotFound:
      return "not_found";
    case CloudErrorKind::kInvalid:
      return "invalid";
    case CloudErrorKind::kTransient:
      return "transient";
  }
  return "transient";
}

}  // namespace det

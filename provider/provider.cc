#include "provider/provider.h"

namespace det::provider {

std::string Offering::Key() const {
  return instance_type + "/" + zone + "/" + (spot ? "spot" : "on-demand");
}

std::string_view InstanceStateName(InstanceState state) {
  switch (state) {
    case InstanceState::kSpotRequested:
      return "spot_requested";
    case InstanceState::kStarting:
      return "starting";
    case InstanceState::kRunning:
      return "running";
    case InstanceState::kStopping:
      return "stopping";
    case InstanceState::kStopped:
      return "stopped";
    case InstanceState::kTerminated:
      return "terminated";
  }
  return "unknown";
}

std::string_view ProviderErrorKindName(ProviderErrorKind kind) {
  switch (kind) {
    case ProviderErrorKind::kCapacity:
      return "capacity";
    case ProviderErrorKind::kQuota:
      return "quota";
    case ProviderErrorKind::kThrottled:
      return "throttled";
    case ProviderErrorKind::kAuth:
      return "auth";
    case ProviderErrorKind::kInvalid:
      return "invalid";
    case ProviderErrorKind::kTransient:
      return "transient";
  }
  return "unknown";
}

ProviderErrorKind ProviderErrorKindOf(CloudErrorKind kind) {
  switch (kind) {
    case CloudErrorKind::kThrottled:
      return ProviderErrorKind::kThrottled;
    case CloudErrorKind::kCapacity:
      return ProviderErrorKind::kCapacity;
    case CloudErrorKind::kQuota:
      return ProviderErrorKind::kQuota;
    case CloudErrorKind::kAuth:
      return ProviderErrorKind::kAuth;
    case CloudErrorKind::kNotFound:
    case CloudErrorKind::kInvalid:
      return ProviderErrorKind::kInvalid;
    case CloudErrorKind::kTransient:
      return ProviderErrorKind::kTransient;
  }
  return ProviderErrorKind::kTransient;
}

}  // namespace det::provider

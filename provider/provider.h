#pragma once

// What the autoscaler asks of a cloud (or of this host): list the pool's instances, launch some,
// terminate some. Implementations: LocalProvider (det-agent processes on this host), and the AWS
// and GCP providers in cloud_aws/ and cloud_gcp/.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/cloud_error.h"
#include "common/status.h"

namespace det::provider {

// A kind of capacity that can run out on its own: instance type × zone × spot/on-demand.
struct Offering {
  std::string instance_type;
  std::string zone;
  bool spot = false;
  std::string Key() const;  // "g4dn.xlarge/us-west-2a/spot"
  bool operator==(const Offering&) const = default;
};

enum class InstanceState {
  kSpotRequested,  // a spot request not yet fulfilled: capacity on the way, no machine yet
  kStarting,       // launched, booting (the cloud's "pending")
  kRunning,
  kStopping,
  kStopped,  // exists but does not run (a stopped VM): terminated by the decider
  kTerminated,
};
std::string_view InstanceStateName(InstanceState state);

// One instance the autoscaler manages (found by the provider's tags). Its agent connects with the
// instance's id as its agent id, which is how instances and agents are matched.
struct Instance {
  std::string id;
  std::string resource_pool;
  InstanceState state = InstanceState::kStarting;
  Offering offering;
  WallTime launched_at{};
  // The id this instance was listed under before: the spot request it fulfilled. The pool takes
  // the request as having become this instance (not as one that vanished).
  std::string replaces;
};

// What to launch: `count` instances of `offering` into `resource_pool`.
struct LaunchRequest {
  std::string resource_pool;
  int count = 0;
  Offering offering;
};

// Why a provider call failed, as far as the autoscaler's reaction goes: capacity and quota
// errors back the offering off (and may fall back to on-demand), throttling slows every call,
// auth and invalid errors need a person, transient ones are retried.
enum class ProviderErrorKind { kCapacity, kQuota, kThrottled, kAuth, kInvalid, kTransient };
std::string_view ProviderErrorKindName(ProviderErrorKind kind);
// A cloud API's error kind as the autoscaler reacts to it (not found is invalid).
ProviderErrorKind ProviderErrorKindOf(CloudErrorKind kind);

struct ProviderError {
  ProviderErrorKind kind = ProviderErrorKind::kTransient;
  std::string message;
};

// A launch may start fewer instances than asked for (clouds launch what they have) and then says
// why in `error`.
struct LaunchResult {
  std::vector<Instance> launched;
  std::optional<ProviderError> error;
  // The provider accepted `launched` but learns only later whether they start (Compute Engine
  // runs an insert as an operation that may end with ZONE_RESOURCE_POOL_EXHAUSTED): each one's
  // outcome comes from TakeLaunchOutcomes().
  bool outcome_later = false;
};

// How an accepted launch ended: `error` empty when the instance was created, else why not (the
// instance does not exist and is not listed).
struct LaunchOutcome {
  std::string instance_id;
  Offering offering;
  std::optional<ProviderError> error;
};

// Threading: called from one thread (its pool's worker). Calls may block (cloud HTTP).
class Provider {
 public:
  virtual ~Provider() = default;
  // The pool's instances that are not terminated, tagged as this cluster's.
  virtual Result<std::vector<Instance>> List(const std::string& resource_pool) = 0;
  virtual LaunchResult Launch(const LaunchRequest& request) = 0;
  // Terminates instances (or cancels spot requests) by id; ids already gone are not an error.
  virtual Status Terminate(const std::vector<std::string>& ids) = 0;
  // The offerings to launch, in order of preference (the first that is not backed off is used).
  virtual std::vector<Offering> Offerings() const = 0;
  // Outcomes of launches that returned `outcome_later`, learnt since the last call (usually
  // while listing). Providers whose launches succeed or fail at once have none.
  virtual std::vector<LaunchOutcome> TakeLaunchOutcomes() { return {}; }
};

}  // namespace det::provider

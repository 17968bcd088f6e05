#pragma once

// The method table: for each method the gateways forward to an actor, its reply, the actor that
// owns it and who may call it. Adding a forwarded method is one entry here (and its wire types in
// bus/catalog/).

#include <string_view>

#include "bus/catalog/experiments.h"
#include "bus/catalog/jobs.h"
#include "bus/catalog/master.h"
#include "bus/catalog/tasks.h"
#include "common/status.h"
#include "master/auth/users.h"

namespace det::master {

// Who may call a method.
enum class Access { kUser, kAdmin };

// Which actor answers a forwarded method, over its inproc endpoint.
enum class Owner { kRegistry, kExperiments };
inline constexpr int kOwners = 2;

template <class Rep, Owner kOwnedBy, Access kAllowed>
struct Route {
  using Reply = Rep;
  static constexpr Owner kOwner = kOwnedBy;
  static constexpr Access kAccess = kAllowed;
};
template <class Req>
struct Forwarded;
template <>
struct Forwarded<bus::AgentListRequest> : Route<bus::AgentList, Owner::kRegistry, Access::kUser> {};
template <>
struct Forwarded<bus::AgentEnableRequest>
    : Route<bus::AgentReply, Owner::kRegistry, Access::kAdmin> {};
template <>
struct Forwarded<bus::SlotEnableRequest>
    : Route<bus::AgentReply, Owner::kRegistry, Access::kAdmin> {};
template <>
struct Forwarded<bus::CommandRunRequest>
    : Route<bus::CommandRunReply, Owner::kRegistry, Access::kUser> {};
template <>
struct Forwarded<bus::TaskListRequest> : Route<bus::TaskList, Owner::kRegistry, Access::kUser> {};
template <>
struct Forwarded<bus::TaskGetRequest> : Route<bus::TaskGetReply, Owner::kRegistry, Access::kUser> {
};
template <>
struct Forwarded<bus::TaskKillRequest>
    : Route<bus::TaskKillReply, Owner::kRegistry, Access::kUser> {};
template <>
struct Forwarded<bus::JobListRequest> : Route<bus::JobList, Owner::kRegistry, Access::kUser> {};
template <>
struct Forwarded<bus::JobUpdateRequest>
    : Route<bus::JobUpdateReply, Owner::kRegistry, Access::kUser> {};
template <>
struct Forwarded<bus::ExperimentCreateRequest>
    : Route<bus::ExperimentCreateReply, Owner::kExperiments, Access::kUser> {};
template <>
struct Forwarded<bus::ExperimentListRequest>
    : Route<bus::ExperimentList, Owner::kExperiments, Access::kUser> {};
template <>
struct Forwarded<bus::ExperimentGetRequest>
    : Route<bus::ExperimentGetReply, Owner::kExperiments, Access::kUser> {};
template <>
struct Forwarded<bus::ExperimentActionRequest>
    : Route<bus::ExperimentActionReply, Owner::kExperiments, Access::kUser> {};
template <>
struct Forwarded<bus::ExperimentContinueRequest>
    : Route<bus::ExperimentContinueReply, Owner::kExperiments, Access::kUser> {};
template <>
struct Forwarded<bus::RegistryStatsRequest>
    : Route<bus::RegistryStats, Owner::kRegistry, Access::kUser> {};
template <>
struct Forwarded<bus::TrialKillRequest>
    : Route<bus::TrialGetReply, Owner::kExperiments, Access::kUser> {};
template <>
struct Forwarded<bus::CheckpointDeleteRequest>
    : Route<bus::CheckpointDeleteReply, Owner::kExperiments, Access::kUser> {};
template <>
struct Forwarded<bus::TrialGetRequest>
    : Route<bus::TrialGetReply, Owner::kExperiments, Access::kUser> {};

// Ok when `caller` may call `method`, which needs `access`; PermissionDenied naming the method
// and the caller otherwise.
Status Allow(const auth::Principal& caller, Access access, std::string_view method);

}  // namespace det::master

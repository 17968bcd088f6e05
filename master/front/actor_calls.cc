#include "master/front/actor_calls.h"

#include "common/environment.h"

namespace det::master {

ActorCalls::ActorCalls(zmq::context_t& context, auth::Users& users, bus::MasterInfo info,
                       int64_t max_message_bytes)
    : users_(users), info_(std::move(info)), clients_(context, max_message_bytes) {}

Status ActorCalls::CheckCommand(const bus::CommandRunRequest& request) {
  if (!request.container.binds.empty()) {
    return InvalidArgument("container.binds: a command may not mount host folders");
  }
  for (const auto& [name, value] : request.env) {
    if (std::string why = WhyNotAWorkloadVariable(name); !why.empty()) {
      return InvalidArgument("env: " + why);
    }
  }
  return Status::Ok();
}

Result<std::optional<bus::AgentUserGroup>> ActorCalls::RunAs(const auth::Principal& caller) {
  DET_ASSIGN_OR_RETURN(std::optional<bus::AgentUserGroup> linked,
                       users_.AgentAccount(caller.user_id));
  return linked ? linked : default_task_;
}

Status ActorCalls::MayChange(const auth::Principal& caller, int64_t id, const std::string& what) {
  if (caller.admin) return Status::Ok();
  DET_ASSIGN_OR_RETURN(bus::ExperimentGetReply experiment,
                       clients_.Call(bus::ExperimentGetRequest{id}));
  const bus::ExperimentSummary& summary = experiment.experiment;
  if (summary.owner_id == 0 || summary.owner_id == caller.user_id) return Status::Ok();
  return PermissionDenied("experiment " + std::to_string(id) + " belongs to \"" + summary.owner +
                          "\": only its owner or an admin may " + what);
}

}  // namespace det::master

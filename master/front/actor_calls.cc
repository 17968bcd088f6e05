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

Status ActorCalls::MayAct(const auth::Principal& caller,
                          const bus::ExperimentActionRequest& request) {
  if (request.action != "delete" || caller.admin) return Status::Ok();
  DET_ASSIGN_OR_RETURN(bus::ExperimentGetReply experiment,
                       clients_.Call(bus::ExperimentGetRequest{request.id}));
  const bus::ExperimentSummary& summary = experiment.experiment;
  if (summary.owner_id == 0 || summary.owner_id == caller.user_id) return Status::Ok();
  return PermissionDenied("experiment " + std::to_string(request.id) + " belongs to \"" +
                          summary.owner + "\": only its owner or an admin may delete it");
}

}  // namespace det::master

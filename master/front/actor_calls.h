#pragma once

#include <optional>
#include <string>
#include <type_traits>
#include <zmq.hpp>

#include "bus/catalog/master.h"
#include "master/auth/users.h"
#include "master/front/actor_clients.h"
#include "master/front/method_table.h"

namespace det::master {

// The forwarded methods as a caller may make them: who is calling (a session or access token),
// whether they may (method_table.h), the rules some methods carry (an experiment's owner is its
// creator, only its owner or an admin deletes it; a command runs as the caller's account and
// mounts no host folder), then the actor that owns the method answers (actor_clients.h). The CLI
// gateway and the HTTP wing only translate their transport to these calls. Also answers
// master.info.
//
// Thread-safe: any thread may call; each call blocks until its answer (see ActorClients).
class ActorCalls {
 public:
  // `users` and `context` outlive the calls.
  ActorCalls(zmq::context_t& context, auth::Users& users, bus::MasterInfo info,
             int64_t max_message_bytes);

  // `client_key`: the caller's CURVE key, as for Users::Authenticate.
  Result<auth::Principal> Authenticate(const std::string& token, const std::string& client_key) {
    return users_.Authenticate(token, client_key);
  }

  // A forwarded method, for `caller` (PermissionDenied when it needs an admin). Determined's
  // basic rules: an experiment belongs to the user who created it (recorded here); anyone may
  // read, pause, activate, cancel or kill any experiment, and only its owner or an admin may
  // delete it or its checkpoints, or continue it (its runs go on as the owner's account).
  template <class Req>
  Result<typename Forwarded<Req>::Reply> Call(const auth::Principal& caller, const Req& request) {
    DET_RETURN_IF_ERROR(Allow(caller, Forwarded<Req>::kAccess, Req::kType));
    if constexpr (std::is_same_v<Req, bus::ExperimentCreateRequest>) {
      Req owned = request;
      owned.owner_id = caller.user_id;
      owned.owner = caller.username;
      return clients_.Call(owned);
    } else if constexpr (std::is_same_v<Req, bus::CommandRunRequest>) {
      DET_RETURN_IF_ERROR(CheckCommand(request));
      Req run = request;
      DET_ASSIGN_OR_RETURN(run.run_as, RunAs(caller));
      run.owner = caller.username;
      return clients_.Call(run);
    } else if constexpr (std::is_same_v<Req, bus::CheckpointDeleteRequest>) {
      Req asked = request;  // the service checks whose experiments they are
      asked.requester_id = caller.user_id;
      asked.requester_admin = caller.admin;
      return clients_.Call(asked);
    } else {
      if constexpr (std::is_same_v<Req, bus::ExperimentActionRequest>) {
        if (request.action == "delete") {
          DET_RETURN_IF_ERROR(MayChange(caller, request.id, "delete it"));
        }
      } else if constexpr (std::is_same_v<Req, bus::ExperimentContinueRequest>) {
        // Its runs go on as its owner's account, under the config the caller changes.
        DET_RETURN_IF_ERROR(MayChange(caller, request.id, "continue it"));
      }
      return clients_.Call(request);
    }
  }

  // What a person may not ask of a command: host folders mounted into its container (only the
  // master mounts checkpoint storage), variables det sets itself (InvalidArgument naming them).
  static Status CheckCommand(const bus::CommandRunRequest& request);
  // Whom `caller`'s tasks run as on agents: their link, else security.default_task, else nobody
  // in particular (the agent's own user).
  Result<std::optional<bus::AgentUserGroup>> RunAs(const auth::Principal& caller);

  const bus::MasterInfo& info() const { return info_; }
  // Once the gateway is bound, before any server starts (info() is read without a lock).
  void SetGatewayPort(int port) { info_.gateway_port = port; }
  void SetGatewayPublicKey(std::string key) { info_.gateway_public_key = std::move(key); }
  // security.default_task: whom the commands of users not linked to an account run as (unset:
  // as the agent). Before any server starts.
  void SetDefaultTask(std::optional<bus::AgentUserGroup> account) {
    default_task_ = std::move(account);
  }
  auth::Users& users() { return users_; }

 private:
  // Whether `caller` may `what` experiment `id`: its owner or an admin (PermissionDenied).
  Status MayChange(const auth::Principal& caller, int64_t id, const std::string& what);

  auth::Users& users_;
  bus::MasterInfo info_;
  std::optional<bus::AgentUserGroup> default_task_;
  ActorClients clients_;
};

}  // namespace det::master

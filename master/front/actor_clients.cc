#include "master/front/actor_clients.h"

#include "master/cluster/registry_endpoint.h"
#include "master/experiments/experiments_endpoint.h"

namespace det::master {

ActorClients::ActorClients(zmq::context_t& context, int64_t max_message_bytes)
    : context_(context), max_message_bytes_(max_message_bytes) {}

std::unique_ptr<bus::RpcClient> ActorClients::Take(Owner owner) {
  {
    std::lock_guard lock(mu_);
    auto& idle = idle_[static_cast<size_t>(owner)];
    if (!idle.empty()) {
      std::unique_ptr<bus::RpcClient> client = std::move(idle.back());
      idle.pop_back();
      return client;
    }
  }
  const char* endpoint = owner == Owner::kRegistry ? kRegistryEndpoint : kExperimentsEndpoint;
  return std::make_unique<bus::RpcClient>(
      context_, endpoint, bus::SocketSecurity{},
      bus::RpcClientConfig{.timeout = std::chrono::seconds(30), .attempts = 1},
      bus::SocketLimits{.max_message_bytes = max_message_bytes_});
}

void ActorClients::Give(Owner owner, std::unique_ptr<bus::RpcClient> client) {
  std::lock_guard lock(mu_);
  idle_[static_cast<size_t>(owner)].push_back(std::move(client));
}

}  // namespace det::master

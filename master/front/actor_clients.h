#pragma once

#include <array>
#include <memory>
#include <mutex>
#include <vector>
#include <zmq.hpp>

#include "bus/rpc_client.h"
#include "master/front/method_table.h"

namespace det::master {

// A pool of RPC clients of the actors' inproc endpoints (the agent registry's, the experiment
// service's), for the gateways' threads: a call takes an idle client of the method's owner or
// makes one, and gives it back afterwards. Clients are reused (a socket per call would cost more
// than the call) and never shared by two calls at once.
//
// Thread-safe: any thread may call; each call blocks until the owner's answer, up to 30 s (the
// registry answers a change of tasks once it is stored: an array of 10,000 rows, behind whatever
// the store had queued).
class ActorClients {
 public:
  // `context` outlives the pool.
  ActorClients(zmq::context_t& context, int64_t max_message_bytes);

  // `request` sent to the actor that owns it (method_table.h), unchecked: its answer or error.
  template <class Req>
  Result<typename Forwarded<Req>::Reply> Call(const Req& request) {
    std::unique_ptr<bus::RpcClient> client = Take(Forwarded<Req>::kOwner);
    auto reply = client->Call<Req, typename Forwarded<Req>::Reply>(request);
    Give(Forwarded<Req>::kOwner, std::move(client));
    return reply;
  }

 private:
  std::unique_ptr<bus::RpcClient> Take(Owner owner);
  void Give(Owner owner, std::unique_ptr<bus::RpcClient> client);

  zmq::context_t& context_;
  int64_t max_message_bytes_;
  std::mutex mu_;                                                           // guards idle_
  std::array<std::vector<std::unique_ptr<bus::RpcClient>>, kOwners> idle_;  // by Owner
};

}  // namespace det::master

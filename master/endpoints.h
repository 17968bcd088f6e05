#pragma once

// Where the master's actors answer in-process requests (the bus's RPC messages over inproc://),
// named once here so that callers (the api facade, the HTTP wing, other actors) need not include
// the actors' own headers. Each actor binds its endpoint; any thread may Ask it over a client of
// its own.

#include <zmq.hpp>

#include "bus/rpc_client.h"
#include "common/clock.h"
#include "common/status.h"

namespace det::master {

// The agent registry: agents, slots, tasks, the job queue (agent_registry.h).
inline constexpr const char* kRegistryEndpoint = "inproc://master/agent-registry";
// The experiment service: experiments, trials, the Core API's reports (experiment_service.h).
inline constexpr const char* kExperimentsEndpoint = "inproc://master/experiments";

// One call to the actor at `endpoint`, over a client of its own: its answer, its error, or
// Unavailable when it did not answer within `timeout`. Blocking; any thread.
template <class Req, class Rep>
Result<Rep> Ask(zmq::context_t& context, const char* endpoint, const Req& request,
                Duration timeout) {
  bus::RpcClient client(context, endpoint, {}, {.timeout = timeout, .attempts = 1});
  return client.Call<Req, Rep>(request);
}

}  // namespace det::master

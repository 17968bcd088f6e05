#pragma once

// Where the agent registry answers in-process requests (the bus's RPC messages over inproc://):
// agents, slots, tasks and the job queue. Named here so that callers (the front door, the
// experiment service, the Core API's reports) need not include the registry's own header. Any
// thread may call it over a bus::RpcClient of its own.
namespace det::master {

inline constexpr const char* kRegistryEndpoint = "inproc://master/agent-registry";

}  // namespace det::master

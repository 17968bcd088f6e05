#pragma once

// Where the experiment service answers in-process requests (the bus's RPC messages over
// inproc://): experiments, trials and the Core API's reports. Named here so that callers (the
// front door, the HTTP wing's preemption board, the Core API's reports) need not include the
// service's own header. Any thread may call it over a bus::RpcClient of its own.
namespace det::master {

inline constexpr const char* kExperimentsEndpoint = "inproc://master/experiments";

}  // namespace det::master

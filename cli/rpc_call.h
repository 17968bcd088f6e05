#pragma once

// What every det command shares: one gateway call, and how failures end the process.

#include <iostream>
#include <zmq.hpp>

#include "bus/rpc_client.h"
#include "cli/cli_client.h"

namespace det::cli {

// Prints "error: <message>" and returns the exit code: 3 when the master is unreachable, else 1.
inline int Fail(const Status& status) {
  std::cerr << "error: " << status.message() << "\n";
  return status.code() == StatusCode::kUnavailable ? 3 : 1;
}

// `config`: how long to wait and how often to try (a call that is not idempotent tries once).
template <class Req, class Rep>
Result<Rep> Call(const CliOptions& options, const Req& request, bus::RpcClientConfig config = {}) {
  auto security = bus::ResolveClientSecurity(options.security);
  if (!security.ok()) return security.status();
  zmq::context_t context;
  bus::RpcClient client(context, GatewayEndpoint(options.master), *security, config);
  return client.Call<Req, Rep>(request);
}

}  // namespace det::cli

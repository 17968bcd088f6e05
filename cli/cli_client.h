#pragma once

#include <string>
#include <zmq.hpp>

#include "bus/rpc_client.h"
#include "bus/security.h"

namespace det::cli {

// Where and how `det` reaches the master's CLI gateway.
struct CliOptions {
  std::string master = "127.0.0.1:8090";  // -m/--master or DET_MASTER: host:port or tcp://...
  bus::SecurityConfig security;           // --key-file, --master-key-file, --plaintext
  bool json = false;                      // --json: print replies as JSON
};

// Turns "host:port", "host" or "tcp://host:port" into a ZeroMQ endpoint (default port 8090).
std::string GatewayEndpoint(const std::string& master);

// Commands; each prints its result and returns the process exit code.
int MasterInfo(const CliOptions& options);
int KeyGen(const std::string& base);

}  // namespace det::cli

#pragma once

#include <string>
#include <zmq.hpp>

#include "bus/rpc_client.h"
#include "bus/security.h"
#include "cli/master_url.h"

namespace det::cli {

// Where and how `det` reaches the master's CLI gateway.
struct CliOptions {
  // -m/--master or DET_MASTER, as CanonicalMaster (master_url.h) writes it: the master's REST URL
  // http(s)://host:port, or its gateway tcp://host:port. Determined's default: localhost:8080.
  std::string master = "http://127.0.0.1:8080";
  bus::SecurityConfig security;  // --key-file, --master-key-file, --plaintext
  bool json = false;             // --json: print replies as JSON
  bool csv = false;              // --csv: as comma-separated values
  // Replies for scripts (output.h) rather than tables for people.
  bool machine_readable() const { return json || csv; }
  std::string user;      // -u/--user or DET_USER: whose session to use
  std::string password;  // DET_PASS: lets det log `user` in by itself
  std::string token;     // DET_USER_TOKEN: a session or access token to send
};

// The ZeroMQ context every gateway call of this det process uses. Never terminated: when det
// exits, the kernel closes its connections, which spares waiting for libzmq's threads to wind down
// (terminating took longer than the call itself). Only for processes that exit after their calls.
zmq::context_t& ClientContext();

// Turns "host:port", "host" or "tcp://host:port" into a ZeroMQ endpoint (default port 8090).
std::string GatewayEndpoint(const std::string& master);
// The gateway endpoint of options.master, which may also be the master's REST URL
// (master_url.h: asked once per det process, with DET_MASTER_CERT_FILE or DET_MASTER_CERT for an
// https one).
Result<std::string> GatewayEndpoint(const CliOptions& options);
// The gateway behind options.master, a REST URL, and its key: asked of its /info once per det
// process, or again with `ask_again`.
Result<MasterGateway> GatewayOfUrl(const CliOptions& options, bool ask_again = false);
// Which master det's session cache keeps a login under: the URL when det was given one (where
// its gateway is may change), else the gateway's endpoint.
Result<std::string> SessionKey(const CliOptions& options);

// When `client`'s last call failed its security handshake, `status` with what to do about it in
// det's terms (the variables and files to set); else `status` unchanged.
Status WithKeyAdvice(Status status, const bus::RpcClient& client, const CliOptions& options);

// Commands; each prints its result and returns the process exit code.
int MasterInfo(const CliOptions& options);
// `det master logs [-f]`: the master's recent log lines (admins); -f keeps following.
int MasterLogs(const CliOptions& options, bool follow);
// `det master forget-key`: the key kept for options.master (a URL) is forgotten.
int MasterForgetKey(const CliOptions& options);
int KeyGen(const std::string& base);

}  // namespace det::cli

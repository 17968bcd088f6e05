#pragma once

// det's relay: one connection to the master kept open across det processes, as ssh's
// ControlPersist keeps one across ssh sessions. A det call made without a relay goes to the master
// itself (a TCP connection and a CURVE handshake, a few round trips: most of a short command's
// time, on a distant master most of all) and then starts `det __relay PATH` in the background;
// the calls that follow hand their request to the relay over a unix socket and it forwards them
// on its open connection. A relay serves one master endpoint with one client key pair and one
// master key, so a det with other keys or another master uses another relay.
//
// - Where: a socket named after the target in the user's private folder ($XDG_RUNTIME_DIR/det,
//   else /tmp/det-UID; mode 0700, owned by the user, else no relay is used), answering only
//   processes of the same user (SO_PEERCRED). The keys reach the relay over a pipe, never on its
//   command line or in its environment.
// - How long: it exits after kRelayIdle without a call (DET_RELAY_IDLE seconds), and stops taking
//   calls after kRelayLifetime, so that a key the master no longer allows is refused at the next
//   handshake instead of riding an old connection.
// - Failures: a det whose relay ends before answering sends the same request itself, with the
//   same id, which the master answers once (a submission is never run twice). A relay whose
//   handshake fails exits; the det that goes direct then reports the key problem as always.
// - DET_RELAY=0 turns relays off.

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "bus/catalog/rpc.h"
#include "bus/rpc_client.h"
#include "bus/security.h"
#include "common/status.h"

namespace det::cli {

inline constexpr const char* kRelayArg = "__relay";
inline constexpr std::chrono::seconds kRelayIdle{30};
inline constexpr std::chrono::minutes kRelayLifetime{10};

// What a relay connects to, and as whom.
struct RelayTarget {
  std::string endpoint;
  bus::SocketSecurity security;  // a client's: plaintext, or CURVE with its keys and the master's
  std::chrono::seconds idle = kRelayIdle;  // how long the relay waits for a call before it exits
};

// The client that sends a call to the master itself: made on first use, connecting to the
// relay's target, with the configuration given (the attempts left).
using DirectClient = std::function<bus::RpcClient&(const bus::RpcClientConfig&)>;

// One gateway call: through the target's relay when one runs (its first attempt; when the relay
// does not answer within the timeout, the other attempts go direct), else direct and a relay
// started for the calls that follow. The reply body, the master's error, or what the direct
// client reports.
Result<bus::Bytes> RelayedCall(const RelayTarget& target, const bus::RpcRequest& request,
                               const bus::RpcClientConfig& config, const DirectClient& direct);

// The relay's socket for `target` ("" when relays are off or no private folder can be had).
std::string RelaySocketPath(const RelayTarget& target);

// `det __relay PATH`: the relay process. Reads its target from stdin (what StartRelay writes),
// serves at PATH until idle. The exit code.
int RunRelay(const std::string& path);

}  // namespace det::cli

#pragma once

// CURVE security for TCP bus sockets.
//
// The master holds a server key pair; agents, the autoscaler and the CLI hold client key pairs
// and know the master's public key. A ZAP handler in the master's process admits a CURVE client
// only if its public key is on the allow-list, and only on the ports its roles allow. Plaintext TCP
// happens only when a config sets `plaintext: true` explicitly; inproc:// sockets never use a
// security mechanism (they do not leave the process).

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "common/config.h"
#include "common/status.h"

namespace det::bus {

// Z85-encoded keys, 40 characters each.
struct CurveKeyPair {
  std::string public_key;
  std::string secret_key;
};

Result<CurveKeyPair> GenerateCurveKeyPair();
// True if `key` is 40 characters of the Z85 alphabet.
bool IsZ85Key(std::string_view key);

// Writes `<base>.key` (public and secret, mode 0600) and `<base>.pub` (public only).
Status WriteKeyPairFiles(const CurveKeyPair& keys, const std::string& base);
// Reads a key file written by WriteKeyPairFiles. A `.pub` file yields an empty secret_key.
Result<CurveKeyPair> ReadKeyFile(const std::string& path);
// The roles a client key may have: each of the master's TCP ports admits one. The CLI gateway
// admits `cli`, the agent channel `agent`, the event bus (publish, subscribe, snapshot)
// `autoscaler`.
inline constexpr const char* kRoleCli = "cli";
inline constexpr const char* kRoleAgent = "agent";
inline constexpr const char* kRoleAutoscaler = "autoscaler";

// A client key the master admits, and on which ports.
struct AllowedClient {
  std::string public_key;
  std::set<std::string> roles;  // empty: every port (an allow-list line that names no role)
  bool operator==(const AllowedClient&) const = default;
};

// Reads an allow-list: per line a Z85 public key (or a key file's `public_key: "..."` line)
// followed by the roles it may take, separated by spaces or commas (`KEY agent`,
// `KEY cli,autoscaler`); a key with no role may use every port. `#` at the start of a line or
// after a space starts a comment (within a key it is one of Z85's characters). Errors name
// the line.
Result<std::vector<AllowedClient>> ReadAllowList(const std::string& path);

// `bus.security` in every component's config.
struct SecurityConfig {
  bool plaintext = false;              // allow TCP without CURVE (default false: CURVE required)
  std::string key_file;                // this component's key pair (`det keygen` writes one)
  std::string server_public_key_file;  // clients: the master's `.pub` file
  std::string allowed_clients_file;    // master: client public keys admitted (one per line)
  // master: which keys the CLI gateway admits. "any" (default): every CURVE key (det makes its
  // own; who calls is the login's session token, which every method but login and the master's
  // info needs); "allow_list": only keys the allow-list gives the role cli.
  std::string cli_keys = "any";

  // Reads the fields under `bus.security`.
  void Read(ConfigReader& reader);
};

// What a socket needs to speak CURVE, resolved from SecurityConfig (keys loaded from files).
struct SocketSecurity {
  enum class Mode { kPlaintext, kCurveServer, kCurveClient } mode = Mode::kPlaintext;
  CurveKeyPair own;
  std::string server_public_key;               // clients only
  std::vector<AllowedClient> allowed_clients;  // servers only
  std::set<std::string> open_roles;  // servers: roles any CURVE key may take (cli_keys: any)
  // Servers: the role this socket admits (its ZAP domain); "": any allowed key.
  std::string role;

  // A copy for a server socket that admits `role` only.
  SocketSecurity WithRole(std::string role) const {
    SocketSecurity copy = *this;
    copy.role = std::move(role);
    return copy;
  }
};

// Loads keys for a server (master) or a client. Without `plaintext: true`, missing keys are an
// error that says how to create them.
Result<SocketSecurity> ResolveServerSecurity(const SecurityConfig& config);
Result<SocketSecurity> ResolveClientSecurity(const SecurityConfig& config);

// The ZAP domain of a server socket that admits every allowed key (no role).
inline constexpr const char* kDefaultZapDomain = "det";

// Sets the socket options for `security` before bind/connect. No-op for inproc endpoints.
void ApplySecurity(zmq::socket_t& socket, const SocketSecurity& security,
                   const std::string& endpoint);

}  // namespace det::bus

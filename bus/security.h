#pragma once

// CURVE security for TCP bus sockets.
//
// The master holds a server key pair; agents, the autoscaler and the CLI hold client key pairs
// and know the master's public key. A ZAP handler in the master's process admits a CURVE client
// only if its public key is on the allow-list, and only on the ports its roles allow. Plaintext TCP
// happens only when a config sets `plaintext: true` explicitly; inproc:// sockets never use a
// security mechanism (they do not leave the process).

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
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

  // Reads the fields under `bus.security`.
  void Read(ConfigReader& reader);
};

// What a socket needs to speak CURVE, resolved from SecurityConfig (keys loaded from files).
struct SocketSecurity {
  enum class Mode { kPlaintext, kCurveServer, kCurveClient } mode = Mode::kPlaintext;
  CurveKeyPair own;
  std::string server_public_key;               // clients only
  std::vector<AllowedClient> allowed_clients;  // servers only
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

// Sets the socket options for `security` before bind/connect. No-op for inproc endpoints.
void ApplySecurity(zmq::socket_t& socket, const SocketSecurity& security,
                   const std::string& endpoint);

// The ZAP handler (RFC 27) for one ZeroMQ context: admits a CURVE client on the allow-list to a
// socket whose role (ZAP domain) the key may take, and refuses everything else with 400 (logged,
// rate-limited, naming the key and the port's role). Runs its own thread from construction until
// destruction. Must be constructed before any CURVE server socket of that context binds.
class ZapHandler {
 public:
  ZapHandler(zmq::context_t& context, std::vector<AllowedClient> allowed);
  // Every key may take every role (tests and benchmarks).
  ZapHandler(zmq::context_t& context, const std::vector<std::string>& allowed_public_keys);
  ~ZapHandler();
  ZapHandler(const ZapHandler&) = delete;
  ZapHandler& operator=(const ZapHandler&) = delete;

  // Admits `public_key` on every port.
  void Allow(const std::string& public_key);
  uint64_t denied() const { return denied_.load(); }
  uint64_t admitted() const { return admitted_.load(); }

 private:
  void Run();
  // "" when the key may use a socket of ZAP domain `domain`, else why not.
  std::string WhyRefused(const std::string& z85, const std::string& domain) const;

  zmq::socket_t socket_;
  mutable std::mutex mu_;
  std::map<std::string, std::set<std::string>> allowed_;  // key → roles (none: all)
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> denied_{0};
  std::atomic<uint64_t> admitted_{0};
  std::thread thread_;
};

}  // namespace det::bus

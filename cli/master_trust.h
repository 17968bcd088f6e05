#pragma once

// How det reaches a master's gateway encrypted from its URL alone (DET_MASTER=http(s)://host:port
// and a login), with no key file from the cluster's admin:
//   - the gateway's CURVE public key comes with its port in the master's GET /info. Over https
//     the master's certificate vouches for it. Over http it is trusted on first use and kept per
//     master URL in known_masters.json in det's config folder (as ssh keeps known_hosts), once
//     the gateway has answered with it; a key that differs later is refused, naming both keys and
//     how to accept the new one. Where the
//     gateway is is kept with it: later det processes ask /info only when it no longer answers
//     there (or presents another key);
//   - det's own key pair is made on first use (client.key in det's config folder, mode 0600) and
//     used for every master; the master's gateway admits any key (bus.security.cli_keys: any), and
//     the login's session token says who calls.
// DET_KEY_FILE and DET_MASTER_KEY_FILE, where set, are used instead (a master that admits only
// allow-listed keys); --plaintext (DET_PLAINTEXT=1) uses none, and nothing else does: a master
// whose /info says its gateway is plaintext is refused (after a key was kept for it, naming it).
// DET_MASTER_CERT_FILE=noverify vouches for nothing: the key is then kept at first use as over
// http.

#include <optional>
#include <string>

#include "bus/rpc_client.h"
#include "bus/security.h"
#include "cli/cli_client.h"
#include "common/status.h"

namespace det::cli {

// The gateway keys det first saw, per master URL, and where their gateways were last found (so
// that a det call asks the master's /info only when that gateway no longer answers).
// DET_KNOWN_MASTERS_FILE overrides the path.
//
//   {"http://host:8080": {"key": "<Z85 public key>", "gateway": "tcp://host:8090"}}
class KnownMasters {
 public:
  static std::string DefaultPath();
  explicit KnownMasters(std::string path = DefaultPath()) : path_(std::move(path)) {}

  // What is kept for `url`, if anything (its gateway and key).
  std::optional<MasterGateway> Find(const std::string& url) const;
  // The key kept for `url`, or "".
  std::string Kept(const std::string& url) const;
  // Keeps `url`'s gateway and its key: refused as Check refuses when another key is kept, unless
  // `vouched` (a certificate vouched for it over https).
  Status Remember(const std::string& url, const MasterGateway& gateway, bool vouched);

  // Ok when `key` is the one kept for `url`, or none was (*first_use set; nothing is kept);
  // PermissionDenied naming both keys when another was kept.
  Status Check(const std::string& url, const std::string& key, bool* first_use) const;
  // Forgets the key kept for `url` (the master was redeployed with new keys).
  Status Forget(const std::string& url);
  // Keeps `key` for `url` whatever was kept: for whoever made the master's keys itself
  // (`det deploy local up`).
  Status Trust(const std::string& url, const std::string& key);
  const std::string& path() const { return path_; }

 private:
  Status KeyChanged(const std::string& url, const std::string& kept, const std::string& key) const;

  std::string path_;
};

// det's own key pair: DET_KEY_FILE's when set, else the one in det's config folder, made on first
// use (DET_CLIENT_KEY_FILE overrides where).
Result<bus::CurveKeyPair> OwnClientKey(const std::string& key_file);

// options.master's gateway (a URL): where det last found it, else asked of the master's /info and
// trusted as above; the same for the rest of the process.
Result<MasterGateway> UrlGateway(const CliOptions& options);

// How det speaks to options.master's gateway (see the top of this file).
Result<bus::SocketSecurity> ResolveCliSecurity(const CliOptions& options);

// After a call to the gateway det had resolved for options.master's URL got no answer
// (Unavailable) or failed its handshake on the gateway's key (another one, or none): asks the
// master's /info again. True
// when the gateway has moved or (over https) changed its key: the request never reached it and
// may be sent again, once, to where it is now. The refusal when an http master now presents
// another key than the one kept (naming both); false otherwise.
Result<bool> GatewayChangedSince(const CliOptions& options, const Status& failure,
                                 std::optional<bus::HandshakeFailure> handshake);

// After a call to options.master's gateway: when the gateway `answered` a client that was given
// the server key `used_key`, and that is the key first seen for it in this process, the key is
// proven and kept, and det says so. Call after every gateway call.
void ConfirmGatewayKey(const CliOptions& options, bool answered, const std::string& used_key);

}  // namespace det::cli

#pragma once

// How det reaches a master's gateway encrypted from its URL alone (DET_MASTER=http(s)://host:port
// and a login), with no key file from the cluster's admin:
//   - the gateway's CURVE public key comes with its port in the master's GET /info. Over https
//     the master's certificate vouches for it. Over http it is trusted on first use and kept per
//     master URL in known_masters.json in det's config folder (as ssh keeps known_hosts); a key
//     that differs later is refused, naming both keys and how to accept the new one;
//   - det's own key pair is made on first use (client.key in det's config folder, mode 0600) and
//     used for every master; the master's gateway admits any key (bus.security.cli_keys: any), and
//     the login's session token says who calls.
// DET_KEY_FILE and DET_MASTER_KEY_FILE, where set, are used instead (a master that admits only
// allow-listed keys); --plaintext (DET_PLAINTEXT=1) uses none.

#include <string>

#include "bus/security.h"
#include "cli/cli_client.h"
#include "common/status.h"

namespace det::cli {

// The gateway keys det first saw, per master URL. DET_KNOWN_MASTERS_FILE overrides the path.
class KnownMasters {
 public:
  static std::string DefaultPath();
  explicit KnownMasters(std::string path = DefaultPath()) : path_(std::move(path)) {}

  // Ok when `key` is the one kept for `url`, or none was (it is then kept, and *first_use set);
  // PermissionDenied naming both keys when another was kept.
  Status Check(const std::string& url, const std::string& key, bool* first_use);
  // Forgets the key kept for `url` (the master was redeployed with new keys).
  Status Forget(const std::string& url);
  // Keeps `key` for `url` whatever was kept: for whoever made the master's keys itself
  // (`det deploy local up`).
  Status Trust(const std::string& url, const std::string& key);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// det's own key pair: DET_KEY_FILE's when set, else the one in det's config folder, made on first
// use (DET_CLIENT_KEY_FILE overrides where).
Result<bus::CurveKeyPair> OwnClientKey(const std::string& key_file);

// How det speaks to options.master's gateway (see the top of this file).
Result<bus::SocketSecurity> ResolveCliSecurity(const CliOptions& options);

}  // namespace det::cli

#pragma once

// Who `det` is: the token it sends with every call, from (in order) DET_USER_TOKEN, the token
// cache, or a login with DET_USER / DET_PASS.

#include <optional>
#include <string>

#include "cli/cli_client.h"
#include "common/status.h"

namespace det::cli {

// Login sessions kept between runs, per master and user, in a JSON file only its owner may read:
// $XDG_CONFIG_HOME/det/auth.json, else ~/.config/det/auth.json (DET_AUTH_FILE overrides).
//
//   {"tcp://host:8090": {"user": "admin", "tokens": {"admin": "dets_..."}}}
//
// "user" is the master's current user: the one a command uses when no -u/DET_USER names one.
class TokenCache {
 public:
  static std::string DefaultPath();
  explicit TokenCache(std::string path = DefaultPath()) : path_(std::move(path)) {}

  // `user` empty: the master's current user. nullopt when there is none.
  std::optional<std::string> Token(const std::string& master, const std::string& user) const;
  std::string CurrentUser(const std::string& master) const;
  // Keeps `token` for `user`, who becomes the master's current user.
  Status Store(const std::string& master, const std::string& user, const std::string& token);
  Status Forget(const std::string& master, const std::string& user);

 private:
  std::string path_;
};

// The token to send: DET_USER_TOKEN, else the cached session of options.user (or the current
// user), else a fresh login when DET_USER and DET_PASS are set, else "" (the master then answers
// that a login is needed).
Result<std::string> ResolveToken(const CliOptions& options);
// After the master refused a cached session (it expired, or the master's data is new): a fresh
// login with DET_USER / DET_PASS when both are set; nullopt when a login is not possible.
std::optional<Result<std::string>> RenewToken(const CliOptions& options);
// Logs `user` in and caches the session as the master's current user; returns the token.
Result<std::string> LoginAndCache(const CliOptions& options, const std::string& user,
                                  const std::string& password);

}  // namespace det::cli

#pragma once

// Gateway methods for users, login sessions and access tokens. Every method but user.login (and
// master.info) needs the caller's token in rpc.request's `token`.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bus/catalog/workload.h"
#include "bus/codec.h"

namespace det::bus {

struct UserSummary {
  int64_t id = 0;
  std::string username;
  bool admin = false;
  bool active = true;
  int64_t created_at = 0;                          // Unix nanoseconds
  std::optional<AgentUserGroup> agent_user_group;  // linked; none: security.default_task
  bool operator==(const UserSummary&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("id", s.id, kRequired);
    v("username", s.username, kRequired);
    v("admin", s.admin);
    v("active", s.active);
    v("created_at", s.created_at);
    v("agent_user_group", s.agent_user_group);
  }
};

// A reply that is one user.
struct UserReply {
  static constexpr std::string_view kType = "user.reply";
  UserSummary user;
  bool operator==(const UserReply&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("user", s.user, kRequired);
  }
};

// Method "user.login": a new session (its token) for a username and password.
struct UserLoginRequest {
  static constexpr std::string_view kType = "user.login";
  std::string username;
  std::string password;
  // `password` is Determined's digest of the password (what Determined's clients send), not the
  // password itself.
  bool is_hashed = false;
  bool operator==(const UserLoginRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("username", s.username, kRequired);
    v("password", s.password, kRequired);
    v("is_hashed", s.is_hashed);
  }
};

struct UserLoginReply {
  static constexpr std::string_view kType = "user.login.reply";
  std::string token;  // the session's secret: present it as rpc.request's token
  int64_t expires_at = 0;
  UserSummary user;
  bool operator==(const UserLoginReply&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("token", s.token, kRequired);
    v("expires_at", s.expires_at);
    v("user", s.user, kRequired);
  }
};

// Method "user.logout": ends the caller's session (an access token is revoked instead).
struct UserLogoutRequest {
  static constexpr std::string_view kType = "user.logout";
  bool operator==(const UserLogoutRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self&, V&) {}
};

// Method "user.whoami": the caller.
struct UserWhoamiRequest {
  static constexpr std::string_view kType = "user.whoami";
  bool operator==(const UserWhoamiRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self&, V&) {}
};

// Method "user.list".
struct UserListRequest {
  static constexpr std::string_view kType = "user.list";
  bool operator==(const UserListRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self&, V&) {}
};

struct UserList {
  static constexpr std::string_view kType = "user.list.reply";
  std::vector<UserSummary> users;
  bool operator==(const UserList&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("users", s.users);
  }
};

// Method "user.create" (admins only).
struct UserCreateRequest {
  static constexpr std::string_view kType = "user.create";
  std::string username;
  std::string password;
  bool admin = false;
  // `password` is Determined's digest of the password (what Determined's clients send), not the
  // password itself.
  bool is_hashed = false;
  bool operator==(const UserCreateRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("username", s.username, kRequired);
    v("password", s.password, kRequired);
    v("is_hashed", s.is_hashed);
    v("admin", s.admin);
  }
};

// Method "user.password": sets a password; the caller's own (`username` empty or theirs), or
// anyone's for an admin. The user's sessions end.
struct UserPasswordRequest {
  static constexpr std::string_view kType = "user.password";
  std::string username;
  std::string password;
  // `password` is Determined's digest of the password (what Determined's clients send), not the
  // password itself.
  bool is_hashed = false;
  bool operator==(const UserPasswordRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("username", s.username);
    v("password", s.password, kRequired);
    v("is_hashed", s.is_hashed);
  }
};

// Method "user.update" (admins only): activate or deactivate a user, grant or take back admin.
// A deactivated user's sessions and tokens stop working at once.
struct UserUpdateRequest {
  static constexpr std::string_view kType = "user.update";
  std::string username;
  std::optional<bool> active;
  std::optional<bool> admin;
  // Links the user to this account on agents: their tasks run as it (admins only).
  std::optional<AgentUserGroup> agent_user_group;
  bool operator==(const UserUpdateRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("username", s.username, kRequired);
    v("active", s.active);
    v("admin", s.admin);
    v("agent_user_group", s.agent_user_group);
  }
};

struct TokenSummary {
  int64_t id = 0;
  int64_t user_id = 0;  // the owner's
  std::string username;
  std::string description;
  int64_t created_at = 0;  // Unix nanoseconds
  int64_t expires_at = 0;  // 0: never
  int64_t revoked_at = 0;  // 0: not revoked
  bool operator==(const TokenSummary&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("id", s.id, kRequired);
    v("user_id", s.user_id);
    v("username", s.username);
    v("description", s.description);
    v("created_at", s.created_at);
    v("expires_at", s.expires_at);
    v("revoked_at", s.revoked_at);
  }
};

// Method "token.create": a long-lived access token for scripts; for the caller, or for another
// user when an admin asks.
struct TokenCreateRequest {
  static constexpr std::string_view kType = "token.create";
  std::string username;  // empty: the caller (or user_id's)
  int64_t user_id = 0;   // the user by id (Determined's PostAccessToken); 0: by username
  std::string description;
  int64_t lifespan_s = 0;  // 0: the default (30 days); -1: never expires
  bool operator==(const TokenCreateRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("username", s.username);
    v("user_id", s.user_id);
    v("description", s.description);
    v("lifespan_s", s.lifespan_s);
  }
};

struct TokenCreateReply {
  static constexpr std::string_view kType = "token.create.reply";
  std::string token;  // the secret, shown once: only its hash is kept
  TokenSummary summary;
  bool operator==(const TokenCreateReply&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("token", s.token, kRequired);
    v("summary", s.summary, kRequired);
  }
};

// Method "token.list": the caller's tokens; everyone's when an admin asks for `all`, or one
// user's (`username`: an admin for another user's). Oldest first.
struct TokenListRequest {
  static constexpr std::string_view kType = "token.list";
  bool all = false;
  std::string username;      // only this user's ("": as `all` says)
  bool active_only = false;  // leave out revoked and expired tokens
  std::vector<int64_t> ids;  // only these tokens (empty: any)
  bool operator==(const TokenListRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("all", s.all);
    v("username", s.username);
    v("active_only", s.active_only);
    v("ids", s.ids);
  }
};

struct TokenList {
  static constexpr std::string_view kType = "token.list.reply";
  std::vector<TokenSummary> tokens;
  bool operator==(const TokenList&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("tokens", s.tokens);
  }
};

// Method "token.patch": revokes, or describes anew, the caller's own token, or anyone's for an
// admin. A revoked token stays revoked.
struct TokenPatchRequest {
  static constexpr std::string_view kType = "token.patch";
  int64_t id = 0;
  bool revoke = false;
  std::optional<std::string> description;  // unset: unchanged
  bool operator==(const TokenPatchRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("id", s.id, kRequired);
    v("revoke", s.revoke);
    v("description", s.description);
  }
};

struct TokenReply {
  static constexpr std::string_view kType = "token.reply";
  TokenSummary token;
  bool operator==(const TokenReply&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("token", s.token, kRequired);
  }
};

}  // namespace det::bus

#pragma once

// Users, login sessions and access tokens. Tokens and sessions are stored only as hashes (the
// caller hashes; see the auth code); a lookup by hash answers only while the token is live.
//
// Functions take the caller's transaction, so several can be one atomic change
// (Database::Run). Times are Unix nanoseconds.

#include <cstdint>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "bus/catalog/workload.h"
#include "common/status.h"

namespace det::storage {

struct UserRecord {
  int64_t id = 0;
  std::string username;
  std::string password_hash;
  bool admin = false;
  bool active = true;
  int64_t created_at_ns = 0;
  // The Unix account on agents the user's tasks run as (Determined's agent user group); none: the
  // cluster's security.default_task.
  std::optional<bus::AgentUserGroup> agent_account;
};

struct AccessTokenRecord {
  int64_t id = 0;
  int64_t user_id = 0;
  std::string description;
  int64_t created_at_ns = 0;
  std::optional<int64_t> expires_at_ns;
  std::optional<int64_t> revoked_at_ns;
};

// AlreadyExists when the name is taken.
Result<int64_t> CreateUser(pqxx::work& tx, const std::string& username,
                           const std::string& password_hash, bool admin);
Result<UserRecord> FindUserByName(pqxx::work& tx, const std::string& username);  // NotFound
Result<UserRecord> FindUserById(pqxx::work& tx, int64_t id);                     // NotFound
std::vector<UserRecord> ListUsers(pqxx::work& tx);
Status SetPasswordHash(pqxx::work& tx, int64_t user_id, const std::string& password_hash);
Status SetUserActive(pqxx::work& tx, int64_t user_id, bool active);
Status SetUserAdmin(pqxx::work& tx, int64_t user_id, bool admin);
// Links the user to `account` on agents, or unlinks (nullopt). NotFound for an unknown user.
Status SetAgentAccount(pqxx::work& tx, int64_t user_id,
                       const std::optional<bus::AgentUserGroup>& account);

// A login session: the user it speaks for and the CURVE public key (Z85) of the client it was
// issued to ("" when bound to none).
struct SessionRecord {
  UserRecord user;
  std::string client_key;
};

// Sessions: created at login, found by token hash until they expire or the user is deactivated.
Result<int64_t> CreateSession(pqxx::work& tx, int64_t user_id, const std::string& token_hash,
                              int64_t expires_at_ns, const std::string& client_key = "");
Result<SessionRecord> FindSession(pqxx::work& tx, const std::string& token_hash, int64_t now_ns);
Status DeleteSession(pqxx::work& tx, const std::string& token_hash);
int64_t DeleteExpiredSessions(pqxx::work& tx, int64_t now_ns);  // returns how many
int64_t DeleteUserSessions(pqxx::work& tx, int64_t user_id);    // returns how many

// Access tokens: long-lived, revocable; expires_at_ns empty means no expiry.
Result<int64_t> CreateAccessToken(pqxx::work& tx, int64_t user_id, const std::string& token_hash,
                                  const std::string& description,
                                  std::optional<int64_t> expires_at_ns);
Result<UserRecord> FindAccessTokenUser(pqxx::work& tx, const std::string& token_hash,
                                       int64_t now_ns);
Status RevokeAccessToken(pqxx::work& tx, int64_t token_id, int64_t now_ns);  // NotFound
Status SetAccessTokenDescription(pqxx::work& tx, int64_t token_id,
                                 const std::string& description);  // NotFound
// One user's tokens, or everyone's when `user_id` is empty; oldest first.
std::vector<AccessTokenRecord> ListAccessTokens(pqxx::work& tx, std::optional<int64_t> user_id);
Result<AccessTokenRecord> FindAccessToken(pqxx::work& tx, int64_t token_id);  // NotFound

}  // namespace det::storage

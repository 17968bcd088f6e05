#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "storage/users_repo.h"

namespace det::master::auth {

// What Users (users.h) records of users, login sessions and access tokens. The seam between the
// rules (who may do what, passwords, the token cache: users.h) and PostgreSQL:
// StoredUserRecords (stored_user_records.h) runs each call as one transaction; the gateways' unit
// tests use an in-memory double (tests/testing/in_memory_user_records.h).
//
// Tokens and sessions are kept only as hashes (the caller hashes). Times are Unix nanoseconds.
// Errors: NotFound naming the user or token, AlreadyExists for a taken username, Unavailable when
// the records are out of reach; an error from a check callback is returned as it is, with
// nothing changed.
//
// Thread-safe: any gateway thread may call.
class UserRecords {
 public:
  using UserRecord = storage::UserRecord;
  using AccessTokenRecord = storage::AccessTokenRecord;
  using SessionRecord = storage::SessionRecord;
  virtual ~UserRecords() = default;

  virtual Result<std::vector<UserRecord>> Users() = 0;  // by id
  virtual Result<UserRecord> UserById(int64_t id) = 0;
  virtual Result<UserRecord> UserByName(const std::string& username) = 0;
  // The first user, only while there is none (false: a user exists, nothing was created).
  virtual Result<bool> CreateFirstUser(const std::string& username,
                                       const std::string& password_hash) = 0;
  virtual Result<UserRecord> CreateUser(const std::string& username,
                                        const std::string& password_hash, bool admin) = 0;
  // Replaces the user's password hash; `end_sessions`: the user's login sessions end with it.
  virtual Result<UserRecord> SetPasswordHash(const std::string& username,
                                             const std::string& password_hash,
                                             bool end_sessions) = 0;
  // Changes the user's `active`, `admin` and `agent_account` as `change` sets them on the record
  // it is given (with every user as they stand, for rules over all of them), atomically: nothing
  // changes when `change` returns an error. The changed record.
  using UserChange =
      std::function<Status(UserRecord& user, const std::vector<UserRecord>& everyone)>;
  virtual Result<UserRecord> ChangeUser(const std::string& username, const UserChange& change) = 0;

  // A login session, bound to the client key `client_key` ("": to none); sessions expired at
  // `now_ns` are dropped on the way.
  virtual Status CreateSession(int64_t user_id, const std::string& token_hash,
                               int64_t expires_at_ns, int64_t now_ns,
                               const std::string& client_key) = 0;
  virtual Status DeleteSession(const std::string& token_hash) = 0;
  // A live session of an active user, with the key it is bound to (nullopt: none).
  virtual Result<std::optional<SessionRecord>> Session(const std::string& token_hash,
                                                       int64_t now_ns) = 0;
  // The active user a live access token speaks for (nullopt: none).
  virtual Result<std::optional<UserRecord>> AccessTokenUser(const std::string& token_hash,
                                                            int64_t now_ns) = 0;

  // expires_at_ns empty: never.
  virtual Result<AccessTokenRecord> CreateAccessToken(int64_t user_id,
                                                      const std::string& token_hash,
                                                      const std::string& description,
                                                      std::optional<int64_t> expires_at_ns) = 0;
  // One user's tokens, or everyone's when `user_id` is empty; oldest first.
  virtual Result<std::vector<AccessTokenRecord>> AccessTokens(std::optional<int64_t> user_id) = 0;
  // Revokes (at `now_ns`, unless it already was) and/or describes the token anew, once `check`
  // passed on it as it stood; the token as it is after.
  struct TokenChange {
    bool revoke = false;
    std::optional<std::string> description;
    int64_t now_ns = 0;
  };
  virtual Result<AccessTokenRecord> ChangeAccessToken(
      int64_t token_id, const std::function<Status(const AccessTokenRecord&)>& check,
      const TokenChange& change) = 0;
};

}  // namespace det::master::auth

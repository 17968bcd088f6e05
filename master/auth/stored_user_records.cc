#include "master/auth/stored_user_records.h"

namespace det::master::auth {

template <class T>
Result<T> StoredUserRecords::Read(const std::function<Result<T>(pqxx::work&)>& read) {
  return storage::Transact<T>(database_, read);
}

Result<std::vector<UserRecords::UserRecord>> StoredUserRecords::Users() {
  return Read<std::vector<UserRecord>>(
      [](pqxx::work& tx) -> Result<std::vector<UserRecord>> { return storage::ListUsers(tx); });
}

Result<UserRecords::UserRecord> StoredUserRecords::UserById(int64_t id) {
  return Read<UserRecord>([&](pqxx::work& tx) { return storage::FindUserById(tx, id); });
}

Result<UserRecords::UserRecord> StoredUserRecords::UserByName(const std::string& username) {
  return Read<UserRecord>([&](pqxx::work& tx) { return storage::FindUserByName(tx, username); });
}

Result<bool> StoredUserRecords::CreateFirstUser(const std::string& username,
                                                const std::string& password_hash) {
  return Read<bool>([&](pqxx::work& tx) -> Result<bool> {
    if (!storage::ListUsers(tx).empty()) return false;
    DET_RETURN_IF_ERROR(storage::CreateUser(tx, username, password_hash, /*admin=*/true).status());
    return true;
  });
}

Result<UserRecords::UserRecord> StoredUserRecords::CreateUser(const std::string& username,
                                                              const std::string& password_hash,
                                                              bool admin) {
  return Read<UserRecord>([&](pqxx::work& tx) -> Result<UserRecord> {
    DET_ASSIGN_OR_RETURN(const int64_t id, storage::CreateUser(tx, username, password_hash, admin));
    return storage::FindUserById(tx, id);
  });
}

Result<UserRecords::UserRecord> StoredUserRecords::SetPasswordHash(const std::string& username,
                                                                   const std::string& password_hash,
                                                                   bool end_sessions) {
  return Read<UserRecord>([&](pqxx::work& tx) -> Result<UserRecord> {
    DET_ASSIGN_OR_RETURN(UserRecord user, storage::FindUserByName(tx, username));
    DET_RETURN_IF_ERROR(storage::SetPasswordHash(tx, user.id, password_hash));
    if (end_sessions) storage::DeleteUserSessions(tx, user.id);
    user.password_hash = password_hash;
    return user;
  });
}

Result<UserRecords::UserRecord> StoredUserRecords::ChangeUser(const std::string& username,
                                                              const UserChange& change) {
  return Read<UserRecord>([&](pqxx::work& tx) -> Result<UserRecord> {
    DET_ASSIGN_OR_RETURN(UserRecord user, storage::FindUserByName(tx, username));
    const UserRecord before = user;
    DET_RETURN_IF_ERROR(change(user, storage::ListUsers(tx)));
    // Only what the change changed is written.
    if (user.active != before.active) {
      DET_RETURN_IF_ERROR(storage::SetUserActive(tx, user.id, user.active));
    }
    if (user.admin != before.admin) {
      DET_RETURN_IF_ERROR(storage::SetUserAdmin(tx, user.id, user.admin));
    }
    if (user.agent_account != before.agent_account) {
      DET_RETURN_IF_ERROR(storage::SetAgentAccount(tx, user.id, user.agent_account));
    }
    return user;
  });
}

Status StoredUserRecords::CreateSession(int64_t user_id, const std::string& token_hash,
                                        int64_t expires_at_ns, int64_t now_ns,
                                        const std::string& client_key) {
  return database_.Run([&](pqxx::work& tx) -> Status {
    storage::DeleteExpiredSessions(tx, now_ns);
    return storage::CreateSession(tx, user_id, token_hash, expires_at_ns, client_key).status();
  });
}

Status StoredUserRecords::DeleteSession(const std::string& token_hash) {
  return database_.Run([&](pqxx::work& tx) { return storage::DeleteSession(tx, token_hash); });
}

Result<std::optional<UserRecords::SessionRecord>> StoredUserRecords::Session(
    const std::string& token_hash, int64_t now_ns) {
  return Read<std::optional<SessionRecord>>(
      [&](pqxx::work& tx) -> Result<std::optional<SessionRecord>> {
        auto session = storage::FindSession(tx, token_hash, now_ns);
        return session.ok() ? std::optional(*session) : std::nullopt;
      });
}

Result<std::optional<UserRecords::UserRecord>> StoredUserRecords::AccessTokenUser(
    const std::string& token_hash, int64_t now_ns) {
  return Read<std::optional<UserRecord>>([&](pqxx::work& tx) -> Result<std::optional<UserRecord>> {
    auto user = storage::FindAccessTokenUser(tx, token_hash, now_ns);
    return user.ok() ? std::optional(*user) : std::nullopt;
  });
}

Result<UserRecords::AccessTokenRecord> StoredUserRecords::CreateAccessToken(
    int64_t user_id, const std::string& token_hash, const std::string& description,
    std::optional<int64_t> expires_at_ns) {
  return Read<AccessTokenRecord>([&](pqxx::work& tx) -> Result<AccessTokenRecord> {
    DET_ASSIGN_OR_RETURN(const int64_t id, storage::CreateAccessToken(tx, user_id, token_hash,
                                                                      description, expires_at_ns));
    return storage::FindAccessToken(tx, id);
  });
}

Result<std::vector<UserRecords::AccessTokenRecord>> StoredUserRecords::AccessTokens(
    std::optional<int64_t> user_id) {
  return Read<std::vector<AccessTokenRecord>>(
      [&](pqxx::work& tx) -> Result<std::vector<AccessTokenRecord>> {
        return storage::ListAccessTokens(tx, user_id);
      });
}

Result<UserRecords::AccessTokenRecord> StoredUserRecords::ChangeAccessToken(
    int64_t token_id, const std::function<Status(const AccessTokenRecord&)>& check,
    const TokenChange& change) {
  return Read<AccessTokenRecord>([&](pqxx::work& tx) -> Result<AccessTokenRecord> {
    DET_ASSIGN_OR_RETURN(const AccessTokenRecord token, storage::FindAccessToken(tx, token_id));
    DET_RETURN_IF_ERROR(check(token));
    if (change.revoke && !token.revoked_at_ns) {
      DET_RETURN_IF_ERROR(storage::RevokeAccessToken(tx, token.id, change.now_ns));
    }
    if (change.description) {
      DET_RETURN_IF_ERROR(storage::SetAccessTokenDescription(tx, token.id, *change.description));
    }
    return storage::FindAccessToken(tx, token.id);
  });
}

}  // namespace det::master::auth

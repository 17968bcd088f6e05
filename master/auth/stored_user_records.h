#pragma once

#include "master/auth/user_records.h"
#include "storage/database.h"

namespace det::master::auth {

// Users, sessions and access tokens in PostgreSQL (storage/users_repo.h): each call one
// transaction on the database's pool.
class StoredUserRecords final : public UserRecords {
 public:
  // `database` outlives the records.
  explicit StoredUserRecords(storage::Database& database) : database_(database) {}

  Result<std::vector<UserRecord>> Users() override;
  Result<UserRecord> UserById(int64_t id) override;
  Result<UserRecord> UserByName(const std::string& username) override;
  Result<bool> CreateFirstUser(const std::string& username,
                               const std::string& password_hash) override;
  Result<UserRecord> CreateUser(const std::string& username, const std::string& password_hash,
                                bool admin) override;
  Result<UserRecord> SetPasswordHash(const std::string& username, const std::string& password_hash,
                                     bool end_sessions) override;
  Result<UserRecord> ChangeUser(const std::string& username, const UserChange& change) override;
  Status CreateSession(int64_t user_id, const std::string& token_hash, int64_t expires_at_ns,
                       int64_t now_ns, const std::string& client_key) override;
  Status DeleteSession(const std::string& token_hash) override;
  Result<std::optional<SessionRecord>> Session(const std::string& token_hash,
                                               int64_t now_ns) override;
  Result<std::optional<UserRecord>> AccessTokenUser(const std::string& token_hash,
                                                    int64_t now_ns) override;
  Result<AccessTokenRecord> CreateAccessToken(int64_t user_id, const std::string& token_hash,
                                              const std::string& description,
                                              std::optional<int64_t> expires_at_ns) override;
  Result<std::vector<AccessTokenRecord>> AccessTokens(std::optional<int64_t> user_id) override;
  Result<AccessTokenRecord> ChangeAccessToken(
      int64_t token_id, const std::function<Status(const AccessTokenRecord&)>& check,
      const TokenChange& change) override;

 private:
  // What `read` returns, read in one transaction.
  template <class T>
  Result<T> Read(const std::function<Result<T>(pqxx::work&)>& read);

  storage::Database& database_;
};

}  // namespace det::master::auth

#include "storage/users_repo.h"

#include "storage/sql_support.h"

namespace det::storage {
namespace {

constexpr const char* kUserColumns =
    "u.id, u.username, u.password_hash, u.admin, u.active, det_ns(u.created_at), u.agent_uid,"
    " u.agent_gid, u.agent_user, u.agent_group";
constexpr int kUserColumnCount = 10;

UserRecord ReadUser(const pqxx::row& row) {
  UserRecord user{row[0].as<int64_t>(), row[1].as<std::string>(), row[2].as<std::string>(),
                  row[3].as<bool>(),    row[4].as<bool>(),        row[5].as<int64_t>(),
                  std::nullopt};
  if (!row[6].is_null()) {
    user.agent_account = bus::AgentUserGroup{row[6].as<int32_t>(), row[7].as<int32_t>(),
                                             row[8].as<std::string>(), row[9].as<std::string>()};
  }
  return user;
}

Result<UserRecord> OneUser(const pqxx::result& result, const std::string& what) {
  if (result.empty()) return NotFound(what + " not found");
  return ReadUser(result[0]);
}

}  // namespace

Result<int64_t> CreateUser(pqxx::work& tx, const std::string& username,
                           const std::string& password_hash, bool admin) {
  auto result = tx.exec_params(
      "INSERT INTO users (username, password_hash, admin) VALUES ($1, $2, $3)"
      " ON CONFLICT (username) DO NOTHING RETURNING id",
      username, password_hash, admin);
  if (result.empty()) return AlreadyExists("user \"" + username + "\" already exists");
  return result[0][0].as<int64_t>();
}

Result<UserRecord> FindUserByName(pqxx::work& tx, const std::string& username) {
  return OneUser(
      tx.exec_params(std::string("SELECT ") + kUserColumns + " FROM users u WHERE u.username = $1",
                     username),
      "user \"" + username + "\"");
}

Result<UserRecord> FindUserById(pqxx::work& tx, int64_t id) {
  return OneUser(
      tx.exec_params(std::string("SELECT ") + kUserColumns + " FROM users u WHERE u.id = $1", id),
      "user " + std::to_string(id));
}

std::vector<UserRecord> ListUsers(pqxx::work& tx) {
  std::vector<UserRecord> users;
  for (const auto& row :
       tx.exec(std::string("SELECT ") + kUserColumns + " FROM users u ORDER BY u.username")) {
    users.push_back(ReadUser(row));
  }
  return users;
}

Status SetPasswordHash(pqxx::work& tx, int64_t user_id, const std::string& password_hash) {
  return ExpectUpdated(
      tx.exec_params("UPDATE users SET password_hash = $2 WHERE id = $1", user_id, password_hash),
      "user " + std::to_string(user_id));
}

Status SetUserActive(pqxx::work& tx, int64_t user_id, bool active) {
  return ExpectUpdated(
      tx.exec_params("UPDATE users SET active = $2 WHERE id = $1", user_id, active),
      "user " + std::to_string(user_id));
}

Status SetUserAdmin(pqxx::work& tx, int64_t user_id, bool admin) {
  return ExpectUpdated(tx.exec_params("UPDATE users SET admin = $2 WHERE id = $1", user_id, admin),
                       "user " + std::to_string(user_id));
}

Status SetAgentAccount(pqxx::work& tx, int64_t user_id,
                       const std::optional<bus::AgentUserGroup>& account) {
  const bus::AgentUserGroup none;
  const bus::AgentUserGroup& a = account ? *account : none;
  return ExpectUpdated(
      tx.exec_params("UPDATE users SET agent_uid = $2, agent_gid = $3, agent_user = $4,"
                     " agent_group = $5 WHERE id = $1",
                     user_id, account ? std::optional<int32_t>(a.uid) : std::nullopt,
                     account ? std::optional<int32_t>(a.gid) : std::nullopt,
                     account ? std::optional<std::string>(a.user) : std::nullopt,
                     account ? std::optional<std::string>(a.group) : std::nullopt),
      "user " + std::to_string(user_id));
}

Result<int64_t> CreateSession(pqxx::work& tx, int64_t user_id, const std::string& token_hash,
                              int64_t expires_at_ns, const std::string& client_key) {
  return tx
      .exec_params1(
          "INSERT INTO user_sessions (user_id, token_hash, expires_at, client_key)"
          " VALUES ($1, $2, det_ts($3), $4) RETURNING id",
          user_id, token_hash, expires_at_ns,
          client_key.empty() ? std::nullopt : std::optional<std::string>(client_key))[0]
      .as<int64_t>();
}

Result<SessionRecord> FindSession(pqxx::work& tx, const std::string& token_hash, int64_t now_ns) {
  const pqxx::result result =
      tx.exec_params(std::string("SELECT ") + kUserColumns +
                         ", coalesce(s.client_key, '')"
                         " FROM user_sessions s JOIN users u ON u.id = s.user_id"
                         " WHERE s.token_hash = $1 AND s.expires_at > det_ts($2) AND u.active",
                     token_hash, now_ns);
  if (result.empty()) return NotFound("session not found");
  return SessionRecord{ReadUser(result[0]), result[0][kUserColumnCount].as<std::string>()};
}

Status DeleteSession(pqxx::work& tx, const std::string& token_hash) {
  tx.exec_params("DELETE FROM user_sessions WHERE token_hash = $1", token_hash);
  return Status::Ok();
}

int64_t DeleteExpiredSessions(pqxx::work& tx, int64_t now_ns) {
  return tx.exec_params("DELETE FROM user_sessions WHERE expires_at <= det_ts($1)", now_ns)
      .affected_rows();
}

Result<int64_t> CreateAccessToken(pqxx::work& tx, int64_t user_id, const std::string& token_hash,
                                  const std::string& description,
                                  std::optional<int64_t> expires_at_ns) {
  return tx
      .exec_params1(
          "INSERT INTO access_tokens (user_id, token_hash, description, expires_at)"
          " VALUES ($1, $2, $3, det_ts($4)) RETURNING id",
          user_id, token_hash, description, expires_at_ns)[0]
      .as<int64_t>();
}

Result<UserRecord> FindAccessTokenUser(pqxx::work& tx, const std::string& token_hash,
                                       int64_t now_ns) {
  return OneUser(
      tx.exec_params(std::string("SELECT ") + kUserColumns +
                         " FROM access_tokens t JOIN users u ON u.id = t.user_id"
                         " WHERE t.token_hash = $1 AND t.revoked_at IS NULL"
                         " AND (t.expires_at IS NULL OR t.expires_at > det_ts($2)) AND u.active",
                     token_hash, now_ns),
      "access token");
}

Status RevokeAccessToken(pqxx::work& tx, int64_t token_id, int64_t now_ns) {
  return ExpectUpdated(tx.exec_params("UPDATE access_tokens SET revoked_at = det_ts($2)"
                                      " WHERE id = $1 AND revoked_at IS NULL",
                                      token_id, now_ns),
                       "live access token " + std::to_string(token_id));
}

Status SetAccessTokenDescription(pqxx::work& tx, int64_t token_id, const std::string& description) {
  return ExpectUpdated(tx.exec_params("UPDATE access_tokens SET description = $2 WHERE id = $1",
                                      token_id, description),
                       "access token " + std::to_string(token_id));
}

namespace {

constexpr const char* kTokenColumns =
    "id, user_id, description, det_ns(created_at), det_ns(expires_at), det_ns(revoked_at)";

AccessTokenRecord ReadToken(const pqxx::row& row) {
  return {row[0].as<int64_t>(), row[1].as<int64_t>(),      row[2].as<std::string>(),
          row[3].as<int64_t>(), Nullable<int64_t>(row[4]), Nullable<int64_t>(row[5])};
}

}  // namespace

std::vector<AccessTokenRecord> ListAccessTokens(pqxx::work& tx, std::optional<int64_t> user_id) {
  std::vector<AccessTokenRecord> tokens;
  for (const auto& row : tx.exec_params(std::string("SELECT ") + kTokenColumns +
                                            " FROM access_tokens WHERE $1::bigint IS NULL"
                                            " OR user_id = $1 ORDER BY id",
                                        user_id)) {
    tokens.push_back(ReadToken(row));
  }
  return tokens;
}

Result<AccessTokenRecord> FindAccessToken(pqxx::work& tx, int64_t token_id) {
  auto result = tx.exec_params(
      std::string("SELECT ") + kTokenColumns + " FROM access_tokens WHERE id = $1", token_id);
  if (result.empty()) return NotFound("access token " + std::to_string(token_id) + " not found");
  return ReadToken(result[0]);
}

int64_t DeleteUserSessions(pqxx::work& tx, int64_t user_id) {
  return tx.exec_params("DELETE FROM user_sessions WHERE user_id = $1", user_id).affected_rows();
}

}  // namespace det::storage

#pragma once

// Users, sessions and access tokens in memory (master/auth/user_records.h), for the unit tests of
// auth::Users and the gateways: the same answers as the stored records (NotFound, AlreadyExists,
// atomic changes), and out of reach when the test says so (SetReachable(false): every call is
// Unavailable). Thread-safe.

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "master/auth/user_records.h"

namespace det::testing {

class InMemoryUserRecords final : public master::auth::UserRecords {
 public:
  void SetReachable(bool reachable) {
    std::lock_guard lock(mu_);
    reachable_ = reachable;
  }
  // How many calls reached the records (what a cache spares).
  int calls() const {
    std::lock_guard lock(mu_);
    return calls_;
  }

  Result<std::vector<UserRecord>> Users() override {
    std::lock_guard lock(mu_);
    DET_RETURN_IF_ERROR(Reach());
    std::vector<UserRecord> users;
    for (const auto& [id, user] : users_) users.push_back(user);
    return users;
  }
  Result<UserRecord> UserById(int64_t id) override {
    std::lock_guard lock(mu_);
    DET_RETURN_IF_ERROR(Reach());
    auto user = users_.find(id);
    if (user == users_.end()) return NotFound("user " + std::to_string(id) + " not found");
    return user->second;
  }
  Result<UserRecord> UserByName(const std::string& username) override {
    std::lock_guard lock(mu_);
    DET_RETURN_IF_ERROR(Reach());
    DET_ASSIGN_OR_RETURN(const UserRecord* user, Find(username));
    return *user;
  }
  Result<bool> CreateFirstUser(const std::string& username,
                               const std::string& password_hash) override {
    std::lock_guard lock(mu_);
    DET_RETURN_IF_ERROR(Reach());
    if (!users_.empty()) return false;
    Add(username, password_hash, true);
    return true;
  }
  Result<UserRecord> CreateUser(const std::string& username, const std::string& password_hash,
                                bool admin) override {
    std::lock_guard lock(mu_);
    DET_RETURN_IF_ERROR(Reach());
    if (Named(username)) return AlreadyExists("user \"" + username + "\" already exists");
    return Add(username, password_hash, admin);
  }
  Result<UserRecord> SetPasswordHash(const std::string& username, const std::string& password_hash,
                                     bool end_sessions) override {
    std::lock_guard lock(mu_);
    DET_RETURN_IF_ERROR(Reach());
    DET_ASSIGN_OR_RETURN(UserRecord * user, Find(username));
    user->password_hash = password_hash;
    if (end_sessions) {
      std::erase_if(sessions_, [&](const auto& s) { return s.second.user_id == user->id; });
    }
    return *user;
  }
  Result<UserRecord> ChangeUser(const std::string& username, const UserChange& change) override {
    std::lock_guard lock(mu_);
    DET_RETURN_IF_ERROR(Reach());
    DET_ASSIGN_OR_RETURN(UserRecord * user, Find(username));
    std::vector<UserRecord> everyone;
    for (const auto& [id, u] : users_) everyone.push_back(u);
    UserRecord changed = *user;
    DET_RETURN_IF_ERROR(change(changed, everyone));
    user->active = changed.active;
    user->admin = changed.admin;
    user->agent_account = changed.agent_account;
    return *user;
  }
  Status CreateSession(int64_t user_id, const std::string& token_hash, int64_t expires_at_ns,
                       int64_t now_ns, const std::string& client_key) override {
    std::lock_guard lock(mu_);
    DET_RETURN_IF_ERROR(Reach());
    std::erase_if(sessions_, [&](const auto& s) { return s.second.expires_at_ns <= now_ns; });
    sessions_[token_hash] = {user_id, expires_at_ns, client_key};
    return Status::Ok();
  }
  Status DeleteSession(const std::string& token_hash) override {
    std::lock_guard lock(mu_);
    DET_RETURN_IF_ERROR(Reach());
    sessions_.erase(token_hash);
    return Status::Ok();
  }
  Result<std::optional<SessionRecord>> Session(const std::string& token_hash,
                                               int64_t now_ns) override {
    std::lock_guard lock(mu_);
    DET_RETURN_IF_ERROR(Reach());
    auto session = sessions_.find(token_hash);
    if (session == sessions_.end() || session->second.expires_at_ns <= now_ns) {
      return std::optional<SessionRecord>();
    }
    std::optional<UserRecord> user = ActiveUser(session->second.user_id);
    if (!user) return std::optional<SessionRecord>();
    return std::optional(SessionRecord{*user, session->second.client_key});
  }
  Result<std::optional<UserRecord>> AccessTokenUser(const std::string& token_hash,
                                                    int64_t now_ns) override {
    std::lock_guard lock(mu_);
    DET_RETURN_IF_ERROR(Reach());
    for (const auto& [id, token] : tokens_) {
      if (token_hashes_.at(id) != token_hash || token.revoked_at_ns) continue;
      if (token.expires_at_ns && *token.expires_at_ns <= now_ns) continue;
      return ActiveUser(token.user_id);
    }
    return std::optional<UserRecord>();
  }
  Result<AccessTokenRecord> CreateAccessToken(int64_t user_id, const std::string& token_hash,
                                              const std::string& description,
                                              std::optional<int64_t> expires_at_ns) override {
    std::lock_guard lock(mu_);
    DET_RETURN_IF_ERROR(Reach());
    const int64_t id = next_token_id_++;
    tokens_[id] = {id, user_id, description, 0, expires_at_ns, std::nullopt};
    token_hashes_[id] = token_hash;
    return tokens_[id];
  }
  Result<std::vector<AccessTokenRecord>> AccessTokens(std::optional<int64_t> user_id) override {
    std::lock_guard lock(mu_);
    DET_RETURN_IF_ERROR(Reach());
    std::vector<AccessTokenRecord> tokens;
    for (const auto& [id, token] : tokens_) {
      if (!user_id || token.user_id == *user_id) tokens.push_back(token);
    }
    return tokens;
  }
  Result<AccessTokenRecord> ChangeAccessToken(
      int64_t token_id, const std::function<Status(const AccessTokenRecord&)>& check,
      const TokenChange& change) override {
    std::lock_guard lock(mu_);
    DET_RETURN_IF_ERROR(Reach());
    auto token = tokens_.find(token_id);
    if (token == tokens_.end()) {
      return NotFound("access token " + std::to_string(token_id) + " not found");
    }
    DET_RETURN_IF_ERROR(check(token->second));
    if (change.revoke && !token->second.revoked_at_ns) token->second.revoked_at_ns = change.now_ns;
    if (change.description) token->second.description = *change.description;
    return token->second;
  }

 private:
  struct StoredSession {
    int64_t user_id = 0;
    int64_t expires_at_ns = 0;
    std::string client_key;
  };
  Status Reach() {
    ++calls_;
    return reachable_ ? Status::Ok() : Unavailable("the test's user records are out of reach");
  }
  UserRecord* Named(const std::string& username) {
    for (auto& [id, user] : users_) {
      if (user.username == username) return &user;
    }
    return nullptr;
  }
  Result<UserRecord*> Find(const std::string& username) {
    UserRecord* user = Named(username);
    if (!user) return NotFound("user \"" + username + "\" not found");
    return user;
  }
  UserRecord& Add(const std::string& username, const std::string& password_hash, bool admin) {
    const int64_t id = next_user_id_++;
    UserRecord& user = users_[id];
    user.id = id;
    user.username = username;
    user.password_hash = password_hash;
    user.admin = admin;
    return user;
  }
  std::optional<UserRecord> ActiveUser(int64_t id) {
    auto user = users_.find(id);
    if (user == users_.end() || !user->second.active) return std::nullopt;
    return user->second;
  }

  mutable std::mutex mu_;
  bool reachable_ = true;
  int calls_ = 0;
  int64_t next_user_id_ = 1;
  int64_t next_token_id_ = 1;
  std::map<int64_t, UserRecord> users_;
  std::map<std::string, StoredSession> sessions_;  // by token hash
  std::map<int64_t, AccessTokenRecord> tokens_;
  std::map<int64_t, std::string> token_hashes_;
};

}  // namespace det::testing

#include "master/auth/users.h"

#include <algorithm>
#include <cctype>

#include "master/auth/secrets.h"
#include "storage/users_repo.h"

namespace det::master::auth {
namespace {

constexpr std::string_view kSessionPrefix = "dets_";
constexpr std::string_view kAccessPrefix = "deta_";
constexpr int64_t kCacheNs = 10'000'000'000;  // 10 s
constexpr size_t kMaxCached = 10000;
constexpr size_t kMaxDescription = 256;

Status CheckDescription(const std::string& description) {
  if (description.size() <= kMaxDescription) return Status::Ok();
  return InvalidArgument("description: longer than " + std::to_string(kMaxDescription) +
                         " characters");
}

constexpr const char* kAdminUsername = "admin";

std::string NewToken(std::string_view prefix) {
  return std::string(prefix) + Base64Url(RandomBytes(32));
}

bool HasPrefix(const std::string& text, std::string_view prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

bus::UserSummary SummaryOf(const storage::UserRecord& user) {
  return {user.id, user.username, user.admin, user.active, user.created_at_ns, user.agent_account};
}

bus::TokenSummary SummaryOf(const storage::AccessTokenRecord& token, std::string username) {
  return {token.id,
          token.user_id,
          std::move(username),
          token.description,
          token.created_at_ns,
          token.expires_at_ns.value_or(0),
          token.revoked_at_ns.value_or(0)};
}

Status Unauthenticated(std::string message) {
  return {StatusCode::kUnauthenticated, std::move(message)};
}

// A user by name, inside `work`'s transaction.
Result<storage::UserRecord> Find(pqxx::work& tx, const std::string& username) {
  return storage::FindUserByName(tx, username);
}

}  // namespace

Status CheckPassword(const std::string& password, const std::string& field) {
  if (password.size() >= 8) return Status::Ok();
  return InvalidArgument(field + ": a password needs at least 8 characters");
}

Status CheckUsername(const std::string& username) {
  const auto allowed = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' ||
           c == '@';
  };
  if (!username.empty() && username.size() <= 64 &&
      std::isalnum(static_cast<unsigned char>(username[0])) &&
      std::all_of(username.begin(), username.end(), allowed)) {
    return Status::Ok();
  }
  return InvalidArgument("username: \"" + username +
                         "\" is not allowed; use 1 to 64 letters, digits and _ . - @, starting "
                         "with a letter or digit");
}

Users::Users(storage::Database& database, const Clock& clock, UsersConfig config)
    : database_(database), clock_(clock), config_(config) {}

Result<std::optional<std::string>> Users::Bootstrap(const std::string& initial_password) {
  if (!initial_password.empty()) {
    DET_RETURN_IF_ERROR(CheckPassword(initial_password, "security.initial_user_password"));
  }
  bool any = false;
  DET_RETURN_IF_ERROR(database_.Run([&](pqxx::work& tx) {
    any = !storage::ListUsers(tx).empty();
    return Status::Ok();
  }));
  if (any) return std::optional<std::string>();
  std::optional<std::string> generated;
  if (initial_password.empty()) generated = Base64Url(RandomBytes(18));
  const std::string hash =
      HashPassword(generated ? *generated : initial_password, config_.password_iterations);
  DET_RETURN_IF_ERROR(database_.Run([&](pqxx::work& tx) -> Status {
    if (!storage::ListUsers(tx).empty()) return Status::Ok();
    return storage::CreateUser(tx, kAdminUsername, hash, /*admin=*/true).status();
  }));
  return generated;
}

Result<std::string> Users::NewPasswordHash(const std::string& password, bool is_hashed) const {
  if (!is_hashed) {
    DET_RETURN_IF_ERROR(CheckPassword(password));
    return HashPassword(password, config_.password_iterations);
  }
  // Determined's clients check the password rule before they hash it.
  if (!IsPasswordDigest(password)) {
    return InvalidArgument(
        "password: with isHashed, expected Determined's salted SHA-512 digest of the password "
        "(128 hex digits)");
  }
  return HashPasswordDigest(password, config_.password_iterations);
}

Result<bus::UserLoginReply> Users::Login(const bus::UserLoginRequest& request) {
  std::optional<storage::UserRecord> user;
  DET_RETURN_IF_ERROR(database_.Run([&](pqxx::work& tx) {
    auto found = Find(tx, request.username);
    if (found.ok()) user = *found;
    return Status::Ok();
  }));
  // An unknown name costs as much as a wrong password, so timing does not tell them apart.
  static const std::string kDummy = HashPassword("", config_.password_iterations);
  const std::string& stored = user ? user->password_hash : kDummy;
  const bool match = request.is_hashed ? VerifyPasswordDigest(request.password, stored)
                                       : VerifyPassword(request.password, stored);
  if (!user || !match || !user->active) {
    return Unauthenticated("invalid username or password");
  }
  // A hash of the older layout verifies plain passwords only: stored again as the digest's, the
  // password serves Determined's clients too from now on.
  const std::optional<std::string> upgraded =
      IsDigestHash(stored)
          ? std::nullopt
          : std::optional(HashPassword(request.password, config_.password_iterations));
  bus::UserLoginReply reply{NewToken(kSessionPrefix), NowNs() + config_.session_lifespan.count(),
                            SummaryOf(*user)};
  DET_RETURN_IF_ERROR(database_.Run([&](pqxx::work& tx) -> Status {
    if (upgraded) DET_RETURN_IF_ERROR(storage::SetPasswordHash(tx, user->id, *upgraded));
    storage::DeleteExpiredSessions(tx, NowNs());
    return storage::CreateSession(tx, user->id, Sha256Hex(reply.token), reply.expires_at).status();
  }));
  return reply;
}

Status Users::Logout(const std::string& token) {
  if (!HasPrefix(token, kSessionPrefix)) {
    return InvalidArgument(
        "an access token is not a login session: revoke it with `det token "
        "revoke ID` instead");
  }
  DET_RETURN_IF_ERROR(
      database_.Run([&](pqxx::work& tx) { return storage::DeleteSession(tx, Sha256Hex(token)); }));
  ForgetAll();
  return Status::Ok();
}

Result<Principal> Users::Authenticate(const std::string& token) {
  if (token.empty()) return Unauthenticated("not logged in: run `det user login` first");
  const bool session = HasPrefix(token, kSessionPrefix);
  if (!session && !HasPrefix(token, kAccessPrefix)) {
    return Unauthenticated("not a det session or access token: run `det user login`");
  }
  const std::string hash = Sha256Hex(token);
  const int64_t now = NowNs();
  if (auto cached = FromCache(hash, now)) return *cached;
  const uint64_t generation = generation_.load();
  std::optional<storage::UserRecord> user;
  DET_RETURN_IF_ERROR(database_.Run([&](pqxx::work& tx) {
    auto found = session ? storage::FindSessionUser(tx, hash, now)
                         : storage::FindAccessTokenUser(tx, hash, now);
    if (found.ok()) user = *found;
    return Status::Ok();
  }));
  if (!user) {
    return Unauthenticated(session ? "the login session has ended: run `det user login` again"
                                   : "the access token is expired or revoked");
  }
  Principal principal{user->id, user->username, user->admin};
  Remember(hash, principal, now, generation);
  RememberAccount(user->id, user->agent_account, now, generation);
  return principal;
}

Result<bus::UserReply> Users::Whoami(const Principal& caller) {
  bus::UserReply reply;
  DET_RETURN_IF_ERROR(database_.Run([&](pqxx::work& tx) -> Status {
    DET_ASSIGN_OR_RETURN(storage::UserRecord user, storage::FindUserById(tx, caller.user_id));
    reply.user = SummaryOf(user);
    return Status::Ok();
  }));
  return reply;
}

Result<bus::UserReply> Users::Get(const Principal&, int64_t user_id) {
  bus::UserReply reply;
  DET_RETURN_IF_ERROR(database_.Run([&](pqxx::work& tx) -> Status {
    DET_ASSIGN_OR_RETURN(storage::UserRecord user, storage::FindUserById(tx, user_id));
    reply.user = SummaryOf(user);
    return Status::Ok();
  }));
  return reply;
}

Result<bus::UserReply> Users::GetByName(const Principal&, const std::string& username) {
  bus::UserReply reply;
  DET_RETURN_IF_ERROR(database_.Run([&](pqxx::work& tx) -> Status {
    DET_ASSIGN_OR_RETURN(storage::UserRecord user, Find(tx, username));
    reply.user = SummaryOf(user);
    return Status::Ok();
  }));
  return reply;
}

Result<bus::UserList> Users::List(const Principal&) {
  bus::UserList reply;
  DET_RETURN_IF_ERROR(database_.Run([&](pqxx::work& tx) {
    reply.users.clear();
    for (const auto& user : storage::ListUsers(tx)) reply.users.push_back(SummaryOf(user));
    return Status::Ok();
  }));
  return reply;
}

Result<bus::UserReply> Users::Create(const Principal& caller,
                                     const bus::UserCreateRequest& request) {
  DET_RETURN_IF_ERROR(RequireAdmin(caller, "create users"));
  DET_RETURN_IF_ERROR(CheckUsername(request.username));
  DET_ASSIGN_OR_RETURN(const std::string hash,
                       NewPasswordHash(request.password, request.is_hashed));
  bus::UserReply reply;
  DET_RETURN_IF_ERROR(database_.Run([&](pqxx::work& tx) -> Status {
    DET_ASSIGN_OR_RETURN(int64_t id,
                         storage::CreateUser(tx, request.username, hash, request.admin));
    DET_ASSIGN_OR_RETURN(storage::UserRecord user, storage::FindUserById(tx, id));
    reply.user = SummaryOf(user);
    return Status::Ok();
  }));
  return reply;
}

Result<bus::UserReply> Users::SetPassword(const Principal& caller,
                                          const bus::UserPasswordRequest& request) {
  const std::string& target = request.username.empty() ? caller.username : request.username;
  const bool self = target == caller.username;
  if (!self) DET_RETURN_IF_ERROR(RequireAdmin(caller, "change another user's password"));
  DET_ASSIGN_OR_RETURN(const std::string hash,
                       NewPasswordHash(request.password, request.is_hashed));
  bus::UserReply reply;
  DET_RETURN_IF_ERROR(database_.Run([&](pqxx::work& tx) -> Status {
    DET_ASSIGN_OR_RETURN(storage::UserRecord user, Find(tx, target));
    DET_RETURN_IF_ERROR(storage::SetPasswordHash(tx, user.id, hash));
    // An admin's reset ends the user's sessions; one's own change keeps the session in use.
    if (!self) storage::DeleteUserSessions(tx, user.id);
    reply.user = SummaryOf(user);
    return Status::Ok();
  }));
  ForgetAll();
  return reply;
}

Result<bus::UserReply> Users::Update(const Principal& caller,
                                     const bus::UserUpdateRequest& request) {
  DET_RETURN_IF_ERROR(RequireAdmin(caller, "activate, deactivate or change admin rights"));
  bus::UserReply reply;
  DET_RETURN_IF_ERROR(database_.Run([&](pqxx::work& tx) -> Status {
    DET_ASSIGN_OR_RETURN(storage::UserRecord user, Find(tx, request.username));
    const bool active = request.active.value_or(user.active);
    const bool admin = request.admin.value_or(user.admin);
    if (user.active && user.admin && !(active && admin)) {
      const auto users = storage::ListUsers(tx);
      const auto active_admins = std::count_if(users.begin(), users.end(),
                                               [](const auto& u) { return u.active && u.admin; });
      if (active_admins <= 1) {
        return InvalidArgument("\"" + user.username +
                               "\" is the last active admin; make another user admin first");
      }
    }
    DET_RETURN_IF_ERROR(storage::SetUserActive(tx, user.id, active));
    DET_RETURN_IF_ERROR(storage::SetUserAdmin(tx, user.id, admin));
    if (request.agent_user_group) {
      const bus::AgentUserGroup& a = *request.agent_user_group;
      DET_RETURN_IF_ERROR(CheckAgentUserGroup(a));
      if ((a.uid == 0 || a.gid == 0) && !config_.allow_root_tasks) {
        return InvalidArgument(
            "tasks run as root (uid or gid 0) only where master.yaml sets "
            "security.allow_root_tasks: true");
      }
      user.agent_account = a;
      DET_RETURN_IF_ERROR(storage::SetAgentAccount(tx, user.id, user.agent_account));
    }
    user.active = active;
    user.admin = admin;
    reply.user = SummaryOf(user);
    return Status::Ok();
  }));
  ForgetAll();
  return reply;
}

Result<std::optional<bus::AgentUserGroup>> Users::AgentAccount(int64_t user_id) {
  const int64_t now = NowNs();
  {
    std::lock_guard lock(mu_);
    auto cached = accounts_.find(user_id);
    if (cached != accounts_.end() && cached->second.valid_until_ns > now) {
      return cached->second.account;
    }
  }
  const uint64_t generation = generation_.load();
  std::optional<bus::AgentUserGroup> account;
  DET_RETURN_IF_ERROR(database_.Run([&](pqxx::work& tx) -> Status {
    DET_ASSIGN_OR_RETURN(storage::UserRecord user, storage::FindUserById(tx, user_id));
    account = user.agent_account;
    return Status::Ok();
  }));
  RememberAccount(user_id, account, now, generation);
  return account;
}

Status CheckAgentUserGroup(const bus::AgentUserGroup& account) {
  if (account.uid < 0) return InvalidArgument("agent uid: must not be negative");
  if (account.gid < 0) return InvalidArgument("agent gid: must not be negative");
  for (auto [field, name] :
       {std::pair{"agent user", &account.user}, {"agent group", &account.group}}) {
    const bool plain = !name->empty() && name->size() <= 32 && name->front() != '-' &&
                       name->find_first_not_of(
                           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                           "0123456789_.-") == std::string::npos;
    if (!plain) {
      return InvalidArgument(std::string(field) + ": \"" + *name +
                             "\" is not a Unix name (1 to 32 letters, digits, _ . -)");
    }
  }
  return Status::Ok();
}

Result<bus::TokenCreateReply> Users::CreateToken(const Principal& caller,
                                                 const bus::TokenCreateRequest& request) {
  if (request.lifespan_s < -1) {
    return InvalidArgument("lifespan: " + std::to_string(request.lifespan_s) +
                           " s is not allowed; give seconds > 0, 0 for the default or -1 for "
                           "never");
  }
  const bool for_another =
      (request.user_id > 0 && request.user_id != caller.user_id) ||
      (request.user_id == 0 && !request.username.empty() && request.username != caller.username);
  if (for_another) DET_RETURN_IF_ERROR(RequireAdmin(caller, "create tokens for another user"));
  DET_RETURN_IF_ERROR(CheckDescription(request.description));
  std::optional<int64_t> expires_at;
  if (request.lifespan_s == 0) expires_at = NowNs() + config_.default_token_lifespan.count();
  if (request.lifespan_s > 0) expires_at = NowNs() + request.lifespan_s * 1'000'000'000;
  bus::TokenCreateReply reply{NewToken(kAccessPrefix), {}};
  DET_RETURN_IF_ERROR(database_.Run([&](pqxx::work& tx) -> Status {
    DET_ASSIGN_OR_RETURN(
        storage::UserRecord user,
        request.user_id > 0
            ? storage::FindUserById(tx, request.user_id)
            : Find(tx, request.username.empty() ? caller.username : request.username));
    DET_ASSIGN_OR_RETURN(int64_t id, storage::CreateAccessToken(tx, user.id, Sha256Hex(reply.token),
                                                                request.description, expires_at));
    DET_ASSIGN_OR_RETURN(storage::AccessTokenRecord token, storage::FindAccessToken(tx, id));
    reply.summary = SummaryOf(token, user.username);
    return Status::Ok();
  }));
  return reply;
}

Result<bus::TokenList> Users::ListTokens(const Principal& caller,
                                         const bus::TokenListRequest& request) {
  if (request.all) DET_RETURN_IF_ERROR(RequireAdmin(caller, "list every user's tokens"));
  if (!request.username.empty() && request.username != caller.username) {
    DET_RETURN_IF_ERROR(RequireAdmin(caller, "list another user's tokens"));
  }
  const int64_t now = NowNs();
  auto wanted = [&](const storage::AccessTokenRecord& token) {
    const bool active =
        !token.revoked_at_ns && (!token.expires_at_ns || *token.expires_at_ns > now);
    return (!request.active_only || active) &&
           (request.ids.empty() ||
            std::find(request.ids.begin(), request.ids.end(), token.id) != request.ids.end());
  };
  bus::TokenList reply;
  DET_RETURN_IF_ERROR(database_.Run([&](pqxx::work& tx) -> Status {
    std::unordered_map<int64_t, std::string> names;
    for (const auto& user : storage::ListUsers(tx)) names[user.id] = user.username;
    std::optional<int64_t> owner;
    if (!request.username.empty()) {
      DET_ASSIGN_OR_RETURN(storage::UserRecord user, Find(tx, request.username));
      owner = user.id;
    } else if (!request.all) {
      owner = caller.user_id;
    }
    reply.tokens.clear();
    for (const auto& token : storage::ListAccessTokens(tx, owner)) {
      if (wanted(token)) reply.tokens.push_back(SummaryOf(token, names[token.user_id]));
    }
    return Status::Ok();
  }));
  return reply;
}

Result<bus::TokenReply> Users::PatchToken(const Principal& caller,
                                          const bus::TokenPatchRequest& request) {
  if (request.description) DET_RETURN_IF_ERROR(CheckDescription(*request.description));
  bus::TokenReply reply;
  DET_RETURN_IF_ERROR(database_.Run([&](pqxx::work& tx) -> Status {
    DET_ASSIGN_OR_RETURN(storage::AccessTokenRecord token,
                         storage::FindAccessToken(tx, request.id));
    if (token.user_id != caller.user_id) {
      DET_RETURN_IF_ERROR(RequireAdmin(
          caller, request.revoke ? "revoke another user's token" : "change another user's token"));
    }
    if (request.revoke && !token.revoked_at_ns) {
      DET_RETURN_IF_ERROR(storage::RevokeAccessToken(tx, token.id, NowNs()));
    }
    if (request.description) {
      DET_RETURN_IF_ERROR(storage::SetAccessTokenDescription(tx, token.id, *request.description));
    }
    DET_ASSIGN_OR_RETURN(token, storage::FindAccessToken(tx, token.id));
    DET_ASSIGN_OR_RETURN(storage::UserRecord owner, storage::FindUserById(tx, token.user_id));
    reply.token = SummaryOf(token, owner.username);
    return Status::Ok();
  }));
  if (request.revoke) ForgetAll();
  return reply;
}

std::optional<Principal> Users::FromCache(const std::string& token_hash, int64_t now_ns) {
  std::lock_guard lock(mu_);
  auto it = cache_.find(token_hash);
  if (it == cache_.end() || it->second.valid_until_ns <= now_ns) return std::nullopt;
  return it->second.principal;
}

void Users::Remember(const std::string& token_hash, const Principal& principal, int64_t now_ns,
                     uint64_t generation) {
  std::lock_guard lock(mu_);
  if (generation != generation_.load()) return;  // a change since the read: it may be stale
  if (cache_.size() >= kMaxCached) cache_.clear();
  cache_[token_hash] = {principal, now_ns + kCacheNs};
}

void Users::RememberAccount(int64_t user_id, const std::optional<bus::AgentUserGroup>& account,
                            int64_t now_ns, uint64_t generation) {
  std::lock_guard lock(mu_);
  if (generation != generation_.load()) return;
  if (accounts_.size() >= kMaxCached) accounts_.clear();
  accounts_[user_id] = {account, now_ns + kCacheNs};
}

void Users::ForgetAll() {
  std::lock_guard lock(mu_);
  ++generation_;
  cache_.clear();
  accounts_.clear();
}

Status RequireAdmin(const Principal& caller, const std::string& what) {
  if (caller.admin) return Status::Ok();
  return PermissionDenied("only an admin may " + what + " (you are \"" + caller.username + "\")");
}

}  // namespace det::master::auth

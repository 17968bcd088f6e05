#include "master/auth/users.h"

#include <algorithm>
#include <cctype>

#include "master/auth/secrets.h"

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

Users::Users(UserRecords& records, const Clock& clock, UsersConfig config)
    : records_(records), clock_(clock), config_(config) {}

Result<std::optional<std::string>> Users::Bootstrap(const std::string& initial_password) {
  if (!initial_password.empty()) {
    DET_RETURN_IF_ERROR(CheckPassword(initial_password, "security.initial_user_password"));
  }
  DET_ASSIGN_OR_RETURN(const std::vector<storage::UserRecord> users, records_.Users());
  if (!users.empty()) return std::optional<std::string>();
  std::optional<std::string> generated;
  if (initial_password.empty()) generated = Base64Url(RandomBytes(18));
  const std::string hash =
      HashPassword(generated ? *generated : initial_password, config_.password_iterations);
  DET_ASSIGN_OR_RETURN(const bool created, records_.CreateFirstUser(kAdminUsername, hash));
  return created ? generated : std::nullopt;
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

Result<bus::UserLoginReply> Users::Login(const bus::UserLoginRequest& request,
                                         const std::string& client_key) {
  std::optional<storage::UserRecord> user;
  if (auto found = records_.UserByName(request.username); found.ok()) {
    user = *found;
  } else if (found.status().code() != StatusCode::kNotFound) {
    return found.status();
  }
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
  if (!IsDigestHash(stored)) {
    DET_RETURN_IF_ERROR(
        records_
            .SetPasswordHash(user->username,
                             HashPassword(request.password, config_.password_iterations),
                             /*end_sessions=*/false)
            .status());
  }
  bus::UserLoginReply reply{NewToken(kSessionPrefix), NowNs() + config_.session_lifespan.count(),
                            SummaryOf(*user)};
  DET_RETURN_IF_ERROR(records_.CreateSession(user->id, Sha256Hex(reply.token), reply.expires_at,
                                             NowNs(), client_key));
  return reply;
}

Status Users::Logout(const std::string& token) {
  if (!HasPrefix(token, kSessionPrefix)) {
    return InvalidArgument(
        "an access token is not a login session: revoke it with `det token "
        "revoke ID` instead");
  }
  DET_RETURN_IF_ERROR(records_.DeleteSession(Sha256Hex(token)));
  ForgetAll();
  return Status::Ok();
}

Result<Principal> Users::Authenticate(const std::string& token, const std::string& client_key) {
  if (token.empty()) return Unauthenticated("not logged in: run `det user login` first");
  const bool session = HasPrefix(token, kSessionPrefix);
  if (!session && !HasPrefix(token, kAccessPrefix)) {
    return Unauthenticated("not a det session or access token: run `det user login`");
  }
  const std::string hash = Sha256Hex(token);
  const int64_t now = NowNs();
  if (auto cached = FromCache(hash, now)) {
    DET_RETURN_IF_ERROR(CheckBinding(cached->client_key, client_key));
    return cached->principal;
  }
  const uint64_t generation = generation_.load();
  std::optional<storage::SessionRecord> found;
  if (session) {
    DET_ASSIGN_OR_RETURN(found, records_.Session(hash, now));
  } else {
    DET_ASSIGN_OR_RETURN(std::optional<storage::UserRecord> user,
                         records_.AccessTokenUser(hash, now));
    if (user) found = storage::SessionRecord{std::move(*user), ""};
  }
  if (!found) {
    return Unauthenticated(session ? "the login session has ended: run `det user login` again"
                                   : "the access token is expired or revoked");
  }
  const storage::UserRecord& user = found->user;
  Principal principal{user.id, user.username, user.admin};
  Remember(hash, {principal, found->client_key, 0}, now, generation);
  RememberAccount(user.id, user.agent_account, now, generation);
  DET_RETURN_IF_ERROR(CheckBinding(found->client_key, client_key));
  return principal;
}

Status Users::CheckBinding(const std::string& bound_key, const std::string& client_key) {
  if (bound_key.empty() || bound_key == client_key) return Status::Ok();
  if (client_key.empty()) {
    return Unauthenticated(
        "this login session was made by `det user login` for one det client and is not taken "
        "over REST: log in with POST /api/v1/auth/login, or use an access token (`det token "
        "create`)");
  }
  return Unauthenticated(
      "this login session belongs to another det client (a session is bound to the client key it "
      "was issued to): run `det user login` here, or put an access token (`det token create`) in "
      "DET_USER_TOKEN");
}

Result<bus::UserReply> Users::Whoami(const Principal& caller) {
  return Get(caller, caller.user_id);
}

Result<bus::UserReply> Users::Get(const Principal&, int64_t user_id) {
  DET_ASSIGN_OR_RETURN(const storage::UserRecord user, records_.UserById(user_id));
  return bus::UserReply{SummaryOf(user)};
}

Result<bus::UserReply> Users::GetByName(const Principal&, const std::string& username) {
  DET_ASSIGN_OR_RETURN(const storage::UserRecord user, records_.UserByName(username));
  return bus::UserReply{SummaryOf(user)};
}

Result<bus::UserList> Users::List(const Principal&) {
  DET_ASSIGN_OR_RETURN(const std::vector<storage::UserRecord> users, records_.Users());
  bus::UserList reply;
  for (const auto& user : users) reply.users.push_back(SummaryOf(user));
  return reply;
}

Result<bus::UserReply> Users::Create(const Principal& caller,
                                     const bus::UserCreateRequest& request) {
  DET_RETURN_IF_ERROR(RequireAdmin(caller, "create users"));
  DET_RETURN_IF_ERROR(CheckUsername(request.username));
  DET_ASSIGN_OR_RETURN(const std::string hash,
                       NewPasswordHash(request.password, request.is_hashed));
  DET_ASSIGN_OR_RETURN(const storage::UserRecord user,
                       records_.CreateUser(request.username, hash, request.admin));
  return bus::UserReply{SummaryOf(user)};
}

Result<bus::UserReply> Users::SetPassword(const Principal& caller,
                                          const bus::UserPasswordRequest& request) {
  const std::string& target = request.username.empty() ? caller.username : request.username;
  const bool self = target == caller.username;
  if (!self) DET_RETURN_IF_ERROR(RequireAdmin(caller, "change another user's password"));
  DET_ASSIGN_OR_RETURN(const std::string hash,
                       NewPasswordHash(request.password, request.is_hashed));
  // An admin's reset ends the user's sessions; one's own change keeps the session in use.
  DET_ASSIGN_OR_RETURN(const storage::UserRecord user,
                       records_.SetPasswordHash(target, hash, /*end_sessions=*/!self));
  ForgetAll();
  return bus::UserReply{SummaryOf(user)};
}

Result<bus::UserReply> Users::Update(const Principal& caller,
                                     const bus::UserUpdateRequest& request) {
  DET_RETURN_IF_ERROR(RequireAdmin(caller, "activate, deactivate or change admin rights"));
  if (request.agent_user_group) {
    const bus::AgentUserGroup& a = *request.agent_user_group;
    DET_RETURN_IF_ERROR(CheckAgentUserGroup(a));
    if ((a.uid == 0 || a.gid == 0) && !config_.allow_root_tasks) {
      return InvalidArgument(
          "tasks run as root (uid or gid 0) only where master.yaml sets "
          "security.allow_root_tasks: true");
    }
  }
  auto change = [&](storage::UserRecord& user,
                    const std::vector<storage::UserRecord>& everyone) -> Status {
    const bool active = request.active.value_or(user.active);
    const bool admin = request.admin.value_or(user.admin);
    if (user.active && user.admin && !(active && admin)) {
      const auto active_admins = std::count_if(everyone.begin(), everyone.end(),
                                               [](const auto& u) { return u.active && u.admin; });
      if (active_admins <= 1) {
        return InvalidArgument("\"" + user.username +
                               "\" is the last active admin; make another user admin first");
      }
    }
    user.active = active;
    user.admin = admin;
    if (request.agent_user_group) user.agent_account = request.agent_user_group;
    return Status::Ok();
  };
  DET_ASSIGN_OR_RETURN(const storage::UserRecord user,
                       records_.ChangeUser(request.username, change));
  ForgetAll();
  return bus::UserReply{SummaryOf(user)};
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
  DET_ASSIGN_OR_RETURN(const storage::UserRecord user, records_.UserById(user_id));
  RememberAccount(user_id, user.agent_account, now, generation);
  return user.agent_account;
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
  DET_ASSIGN_OR_RETURN(
      const storage::UserRecord user,
      request.user_id > 0
          ? records_.UserById(request.user_id)
          : records_.UserByName(request.username.empty() ? caller.username : request.username));
  bus::TokenCreateReply reply{NewToken(kAccessPrefix), {}};
  DET_ASSIGN_OR_RETURN(
      const storage::AccessTokenRecord token,
      records_.CreateAccessToken(user.id, Sha256Hex(reply.token), request.description, expires_at));
  reply.summary = SummaryOf(token, user.username);
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
  DET_ASSIGN_OR_RETURN(const std::vector<storage::UserRecord> users, records_.Users());
  std::unordered_map<int64_t, std::string> names;
  for (const auto& user : users) names[user.id] = user.username;
  std::optional<int64_t> owner;
  if (!request.username.empty()) {
    DET_ASSIGN_OR_RETURN(const storage::UserRecord user, records_.UserByName(request.username));
    owner = user.id;
  } else if (!request.all) {
    owner = caller.user_id;
  }
  DET_ASSIGN_OR_RETURN(const std::vector<storage::AccessTokenRecord> tokens,
                       records_.AccessTokens(owner));
  bus::TokenList reply;
  for (const auto& token : tokens) {
    if (wanted(token)) reply.tokens.push_back(SummaryOf(token, names[token.user_id]));
  }
  return reply;
}

Result<bus::TokenReply> Users::PatchToken(const Principal& caller,
                                          const bus::TokenPatchRequest& request) {
  if (request.description) DET_RETURN_IF_ERROR(CheckDescription(*request.description));
  auto may_change = [&](const storage::AccessTokenRecord& token) -> Status {
    if (token.user_id == caller.user_id) return Status::Ok();
    return RequireAdmin(
        caller, request.revoke ? "revoke another user's token" : "change another user's token");
  };
  DET_ASSIGN_OR_RETURN(const storage::AccessTokenRecord token,
                       records_.ChangeAccessToken(request.id, may_change,
                                                  {request.revoke, request.description, NowNs()}));
  if (request.revoke) ForgetAll();
  DET_ASSIGN_OR_RETURN(const storage::UserRecord owner, records_.UserById(token.user_id));
  return bus::TokenReply{SummaryOf(token, owner.username)};
}

std::optional<Users::Cached> Users::FromCache(const std::string& token_hash, int64_t now_ns) {
  std::lock_guard lock(mu_);
  auto it = cache_.find(token_hash);
  if (it == cache_.end() || it->second.valid_until_ns <= now_ns) return std::nullopt;
  return it->second;
}

void Users::Remember(const std::string& token_hash, Cached cached, int64_t now_ns,
                     uint64_t generation) {
  std::lock_guard lock(mu_);
  if (generation != generation_.load()) return;  // a change since the read: it may be stale
  if (cache_.size() >= kMaxCached) cache_.clear();
  cached.valid_until_ns = now_ns + kCacheNs;
  cache_[token_hash] = std::move(cached);
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

#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "bus/catalog/users.h"
#include "common/clock.h"
#include "common/status.h"
#include "master/auth/user_records.h"

namespace det::master::auth {

// Who is calling: the user a session or access token speaks for.
struct Principal {
  int64_t user_id = 0;
  std::string username;
  bool admin = false;
};

// OK for an admin; PermissionDenied "only an admin may <what> (you are "<name>")" otherwise.
// Checked before a request is read: whoever may not make it learns nothing of its rules.
Status RequireAdmin(const Principal& caller, const std::string& what);

struct UsersConfig {
  Duration session_lifespan = std::chrono::hours(24 * 7);         // a login lasts a week
  Duration default_token_lifespan = std::chrono::hours(24 * 30);  // as Determined's tokens
  int password_iterations = 600000;                               // PBKDF2 work factor
  // security.allow_root_tasks: whether a user may be linked to root (uid or gid 0) on agents.
  bool allow_root_tasks = false;
};

// Users, their login sessions and access tokens, with Determined's basic rules: admins create
// users, change others' passwords, activate and deactivate users and see and revoke everyone's
// tokens; everyone may change their own password and manage their own tokens. At least one active
// admin always remains.
//
// Passwords are stored as PBKDF2 hashes of Determined's digest of them (secrets.h), so a login with
// the password (det, the WebUI) and one with the digest (Determined's CLI and SDK) both work;
// tokens as SHA-256 digests. A session token is "dets_<43 base64url chars>", an access token
// "deta_<...>". Authenticate() answers from a short cache (10 s); every change made here (logout,
// revocation, password, deactivation) empties it, so it takes effect at once.
//
// What is stored goes through UserRecords (user_records.h: PostgreSQL, or a test's double).
//
// Thread-safe: any gateway thread may call any method. Each call may wait on PostgreSQL; Login
// and the password setters also spend the PBKDF2 work factor (about a quarter of a second).
class Users {
 public:
  // `records` outlive the users.
  Users(UserRecords& records, const Clock& clock, UsersConfig config = {});

  // At the first start (no users yet) creates the admin user `admin` with `initial_password`, or
  // with a generated one, which is returned so that the caller shows it once. Later starts change
  // nothing and return nullopt. A configured password that breaks the password rule is refused.
  Result<std::optional<std::string>> Bootstrap(const std::string& initial_password);

  // Unauthenticated "invalid username or password" for a wrong name, password or inactive user.
  // `client_key`: the CURVE public key (Z85) the caller proved on the gateway, which the session
  // is then bound to; "" over REST (and on a gateway in plaintext): bound to none.
  Result<bus::UserLoginReply> Login(const bus::UserLoginRequest& request,
                                    const std::string& client_key = "");
  Status Logout(const std::string& token);
  // Unauthenticated unless the token is a live session or access token of an active user. A
  // session bound to a client key is taken only from that key (`client_key`: as for Login), so
  // a session token copied off one client works neither from another nor over REST. Access
  // tokens are bound to nothing: they are made to be handed to scripts.
  Result<Principal> Authenticate(const std::string& token, const std::string& client_key = "");

  Result<bus::UserReply> Whoami(const Principal& caller);
  Result<bus::UserList> List(const Principal& caller);
  // One user, by id or by name; NotFound naming it otherwise.
  Result<bus::UserReply> Get(const Principal& caller, int64_t user_id);
  Result<bus::UserReply> GetByName(const Principal& caller, const std::string& username);
  Result<bus::UserReply> Create(const Principal& caller, const bus::UserCreateRequest& request);
  Result<bus::UserReply> SetPassword(const Principal& caller,
                                     const bus::UserPasswordRequest& request);
  // Activates, deactivates, changes admin rights or links the user to an account on agents
  // (admins only).
  Result<bus::UserReply> Update(const Principal& caller, const bus::UserUpdateRequest& request);
  // The account on agents the user is linked to; nullopt when not linked. Cached as tokens are
  // (a task submission asks each time).
  Result<std::optional<bus::AgentUserGroup>> AgentAccount(int64_t user_id);

  Result<bus::TokenCreateReply> CreateToken(const Principal& caller,
                                            const bus::TokenCreateRequest& request);
  Result<bus::TokenList> ListTokens(const Principal& caller, const bus::TokenListRequest& request);
  Result<bus::TokenReply> PatchToken(const Principal& caller,
                                     const bus::TokenPatchRequest& request);

 private:
  struct Cached {
    Principal principal;
    std::string client_key;  // the session's binding ("": none)
    int64_t valid_until_ns = 0;
  };
  struct CachedAccount {
    std::optional<bus::AgentUserGroup> account;
    int64_t valid_until_ns = 0;
  };
  int64_t NowNs() const { return UnixNanos(clock_.WallNow()); }
  // The hash to store for a new password, or its digest (`is_hashed`); InvalidArgument when it
  // breaks the password rule (or is no digest).
  Result<std::string> NewPasswordHash(const std::string& password, bool is_hashed) const;
  std::optional<Cached> FromCache(const std::string& token_hash, int64_t now_ns);
  // Caches what was read from the database unless something changed since `generation`.
  void Remember(const std::string& token_hash, Cached cached, int64_t now_ns, uint64_t generation);
  // OK when a session bound to `bound_key` ("": none) may be used by `client_key`.
  static Status CheckBinding(const std::string& bound_key, const std::string& client_key);
  void RememberAccount(int64_t user_id, const std::optional<bus::AgentUserGroup>& account,
                       int64_t now_ns, uint64_t generation);
  void ForgetAll();

  UserRecords& records_;
  const Clock& clock_;
  UsersConfig config_;
  std::mutex mu_;  // guards cache_ and accounts_
  std::unordered_map<std::string, Cached> cache_;
  std::unordered_map<int64_t, CachedAccount> accounts_;  // by user id
  std::atomic<uint64_t> generation_{0};                  // bumped by every change
};

// The password rule: at least 8 characters. InvalidArgument naming `field` otherwise.
Status CheckPassword(const std::string& password, const std::string& field = "password");
// An account on agents: ids not negative, names of 1 to 32 letters, digits and `_ . -` (not
// starting with `-`). InvalidArgument naming the field otherwise.
Status CheckAgentUserGroup(const bus::AgentUserGroup& account);
// Usernames: 1 to 64 letters, digits and `_ . - @`, starting with a letter or digit.
Status CheckUsername(const std::string& username);

}  // namespace det::master::auth

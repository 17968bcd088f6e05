#include "cli/user_commands.h"

#include <termios.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <iostream>
#include <nlohmann/json.hpp>

#include "bus/catalog/users.h"
#include "bus/catalog/users_json.h"
#include "cli/credentials.h"
#include "cli/output.h"
#include "cli/rpc_call.h"
#include "common/config.h"

namespace det::cli {
namespace {

using bus::ToJson;

// One line from the terminal without echo, or from standard input when it is not a terminal.
std::string ReadSecretLine(const std::string& prompt) {
  std::string line;
  if (!isatty(STDIN_FILENO)) {
    std::getline(std::cin, line);
    return line;
  }
  std::cerr << prompt << std::flush;
  termios saved{};
  tcgetattr(STDIN_FILENO, &saved);
  termios quiet = saved;
  quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
  tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet);
  std::getline(std::cin, line);
  tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved);
  std::cerr << "\n";
  return line;
}

// A new password: asked twice on a terminal.
Result<std::string> ReadNewPassword(const std::string& whose) {
  std::string password = ReadSecretLine("New password for " + whose + ": ");
  if (isatty(STDIN_FILENO) && ReadSecretLine("Again: ") != password) {
    return InvalidArgument("the two passwords differ; nothing changed");
  }
  return password;
}

// Prints a one-user reply: JSON, or `text` followed by the user's name.
int PrintUser(const CliOptions& options, const Result<bus::UserReply>& reply,
              const std::string& text) {
  if (!reply.ok()) return Fail(reply.status());
  if (options.machine_readable()) {
    PrintReply(options, ToJson(reply->user));
  } else {
    std::cout << text << " \"" << reply->user.username << "\""
              << (reply->user.admin ? " (admin)" : "") << (reply->user.active ? "" : " (inactive)")
              << "\n";
  }
  return 0;
}

int Login(CliOptions& options, const std::string& username) {
  const std::string user = username.empty() ? options.user : username;
  if (user.empty()) return Fail(InvalidArgument("give a username: det user login USERNAME"));
  const bool known = !options.password.empty() && (username.empty() || username == options.user);
  const std::string password =
      known ? options.password : ReadSecretLine("Password for " + user + ": ");
  auto token = LoginAndCache(options, user, password);
  if (!token.ok()) return Fail(token.status());
  options.token = *token;
  return PrintUser(options, Call<bus::UserWhoamiRequest, bus::UserReply>(options, {}),
                   "logged in as");
}

int Logout(const CliOptions& options) {
  auto token = ResolveToken(options);
  if (!token.ok()) return Fail(token.status());
  if (token->empty()) return Fail(InvalidArgument("not logged in"));
  auto reply = Call<bus::UserLogoutRequest, bus::UserReply>(options, {});
  auto session = SessionKey(options);
  if (!session.ok()) return Fail(session.status());
  const std::string& master = *session;
  TokenCache cache;
  const std::string user = options.user.empty() ? cache.CurrentUser(master) : options.user;
  // The local session goes even when the master no longer knew it.
  if (Status forgotten = cache.Forget(master, user); !forgotten.ok()) return Fail(forgotten);
  if (!reply.ok() && reply.status().code() != StatusCode::kUnauthenticated) {
    return Fail(reply.status());
  }
  std::cout << "logged out" << (user.empty() ? "" : " \"" + user + "\"") << "\n";
  return 0;
}

int ListUsers(const CliOptions& options) {
  auto reply = Call<bus::UserListRequest, bus::UserList>(options, {});
  if (!reply.ok()) return Fail(reply.status());
  if (options.machine_readable()) {
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (const auto& u : reply->users) all.push_back(ToJson(u));
    PrintReply(options, all);
    return 0;
  }
  std::printf("%-24s %-6s %-7s %-20s %s\n", "USERNAME", "ADMIN", "ACTIVE", "CREATED", "AGENT USER");
  for (const auto& u : reply->users) {
    const std::string agent_user = u.agent_user_group
                                       ? u.agent_user_group->user + " (" +
                                             std::to_string(u.agent_user_group->uid) + ":" +
                                             std::to_string(u.agent_user_group->gid) + ")"
                                       : "-";
    std::printf("%-24s %-6s %-7s %-20s %s\n", u.username.c_str(), u.admin ? "yes" : "no",
                u.active ? "yes" : "no", UtcTime(u.created_at).c_str(), agent_user.c_str());
  }
  return 0;
}

void PrintTokens(const std::vector<bus::TokenSummary>& tokens) {
  std::printf("%6s %-16s %-21s %-21s %-21s %s\n", "ID", "USERNAME", "CREATED", "EXPIRES", "REVOKED",
              "DESCRIPTION");
  for (const auto& t : tokens) {
    std::printf("%6lld %-16s %-21s %-21s %-21s %s\n", static_cast<long long>(t.id),
                t.username.c_str(), UtcTime(t.created_at).c_str(),
                t.expires_at ? UtcTime(t.expires_at).c_str() : "never",
                UtcTime(t.revoked_at).c_str(), t.description.c_str());
  }
}

int CreateToken(const CliOptions& options, const bus::TokenCreateRequest& base,
                const std::string& lifespan) {
  auto seconds = ParseLifespan(lifespan);
  if (!seconds.ok()) return Fail(seconds.status().WithContext("--lifespan"));
  bus::TokenCreateRequest request = base;
  request.lifespan_s = *seconds;
  auto reply =
      Call<bus::TokenCreateRequest, bus::TokenCreateReply>(options, request, {.attempts = 1});
  if (!reply.ok()) return Fail(reply.status());
  if (options.machine_readable()) {
    nlohmann::ordered_json out = ToJson(reply->summary);
    out["token"] = reply->token;
    PrintReply(options, out);
  } else {
    std::cerr << "token " << reply->summary.id << " for \"" << reply->summary.username
              << "\", expires "
              << (reply->summary.expires_at ? UtcTime(reply->summary.expires_at)
                                            : std::string("never"))
              << " (shown only now; use it as DET_USER_TOKEN):\n";
    std::cout << reply->token << "\n";
  }
  return 0;
}

int ListTokens(const CliOptions& options, bool all) {
  bus::TokenListRequest request;
  request.all = all;
  auto reply = Call<bus::TokenListRequest, bus::TokenList>(options, request);
  if (!reply.ok()) return Fail(reply.status());
  if (options.machine_readable()) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& t : reply->tokens) out.push_back(ToJson(t));
    PrintReply(options, out);
  } else {
    PrintTokens(reply->tokens);
  }
  return 0;
}

int RevokeToken(const CliOptions& options, int64_t id) {
  bus::TokenPatchRequest request;
  request.id = id;
  request.revoke = true;
  auto reply = Call<bus::TokenPatchRequest, bus::TokenReply>(options, request);
  if (!reply.ok()) return Fail(reply.status());
  if (options.machine_readable()) {
    PrintReply(options, ToJson(reply->token));
  } else {
    std::cout << "revoked token " << reply->token.id << " of \"" << reply->token.username << "\"\n";
  }
  return 0;
}

struct UserArgs {
  std::string username;
  bool admin = false;
  bus::TokenCreateRequest token;
  std::string lifespan;
  bool all = false;
  int64_t token_id = 0;
  bus::AgentUserGroup agent{-1, -1, "", ""};
};

void AddTokenCommands(CLI::App& app, CliOptions& options, int& rc, UserArgs& args) {
  auto* token = app.add_subcommand("token", "access tokens for scripts")->require_subcommand(1);
  auto* create = token->add_subcommand("create", "a new access token, printed once");
  create->add_option("--description", args.token.description, "what it is for");
  create->add_option("--lifespan", args.lifespan, "30d (default), 12h, 90m, ... or never");
  create->add_option("--user", args.token.username, "for another user (admins)");
  create->callback([&] { rc = CreateToken(options, args.token, args.lifespan); });
  auto* list = token->add_subcommand("list", "your access tokens");
  list->add_flag("--all", args.all, "everyone's (admins)");
  list->callback([&] { rc = ListTokens(options, args.all); });
  auto* revoke = token->add_subcommand("revoke", "stop a token from working");
  revoke->add_option("token_id", args.token_id, "the token's ID (det token list)")->required();
  revoke->callback([&] { rc = RevokeToken(options, args.token_id); });
}

}  // namespace

void AddUserCommands(CLI::App& app, CliOptions& options, int& rc) {
  static UserArgs args;
  auto* user = app.add_subcommand("user", "users and logins")->require_subcommand(1);
  auto* login = user->add_subcommand("login", "log in; the session is kept for later commands");
  login->add_option("username", args.username, "who (default: -u / DET_USER)");
  login->callback([&] { rc = Login(options, args.username); });
  user->add_subcommand("logout", "end this session")->callback([&] { rc = Logout(options); });
  user->add_subcommand("whoami", "the user this session speaks for")->callback([&] {
    rc = PrintUser(options, Call<bus::UserWhoamiRequest, bus::UserReply>(options, {}), "you are");
  });
  user->add_subcommand("list", "every user")->callback([&] { rc = ListUsers(options); });
  auto* create = user->add_subcommand("create", "a new user (admins); asks for the password");
  create->add_option("username", args.username, "the new user's name")->required();
  create->add_flag("--admin", args.admin, "make the user an admin");
  create->callback([&] {
    auto password = ReadNewPassword(args.username);
    rc = password.ok()
             ? PrintUser(options,
                         Call<bus::UserCreateRequest, bus::UserReply>(
                             options, {args.username, *password, args.admin}, {.attempts = 1}),
                         "created user")
             : Fail(password.status());
  });
  auto* password =
      user->add_subcommand("change-password", "your password, or another user's (admins)");
  password->add_option("username", args.username, "whose (default: yours)");
  password->callback([&] {
    auto secret = ReadNewPassword(args.username.empty() ? "you" : args.username);
    rc = secret.ok() ? PrintUser(options,
                                 Call<bus::UserPasswordRequest, bus::UserReply>(
                                     options, {args.username, *secret}),
                                 "changed the password of")
                     : Fail(secret.status());
  });
  for (bool active : {true, false}) {
    auto* sub = user->add_subcommand(
        active ? "activate" : "deactivate",
        active ? "let a user log in again (admins)" : "stop a user's logins and tokens (admins)");
    sub->add_option("username", args.username, "the user")->required();
    sub->callback([&, active] {
      rc = PrintUser(options,
                     Call<bus::UserUpdateRequest, bus::UserReply>(
                         options, {args.username, active, std::nullopt, std::nullopt}),
                     active ? "activated" : "deactivated");
    });
  }
  // Determined's command and options: all four are required.
  auto* link = user->add_subcommand("link-with-agent-user",
                                    "run a user's tasks as this account on agents (admins)");
  link->add_option("det_username", args.username, "the user")->required();
  link->add_option("--agent-uid", args.agent.uid, "the account's user id")->required();
  link->add_option("--agent-gid", args.agent.gid, "its primary group's id")->required();
  link->add_option("--agent-user", args.agent.user, "its user name")->required();
  link->add_option("--agent-group", args.agent.group, "its primary group's name")->required();
  link->callback([&] {
    bus::UserUpdateRequest request{args.username, std::nullopt, std::nullopt, args.agent};
    rc = PrintUser(options, Call<bus::UserUpdateRequest, bus::UserReply>(options, request),
                   "linked " + args.agent.user + " (uid " + std::to_string(args.agent.uid) +
                       ", gid " + std::to_string(args.agent.gid) + ") on agents to");
  });
  AddTokenCommands(app, options, rc, args);
}

}  // namespace det::cli

#include "cli/credentials.h"

#include <nlohmann/json.hpp>

#include "bus/catalog/users.h"
#include "bus/rpc_client.h"
#include "cli/config_files.h"
#include "cli/master_trust.h"

namespace det::cli {

std::string TokenCache::DefaultPath() { return ConfigFile("auth.json", "DET_AUTH_FILE"); }

std::optional<std::string> TokenCache::Token(const std::string& master,
                                             const std::string& user) const {
  const nlohmann::json doc = LoadJsonFile(path_);
  if (!doc.contains(master) || !doc[master].is_object()) return std::nullopt;
  const nlohmann::json& entry = doc[master];
  const std::string who = user.empty() ? entry.value("user", "") : user;
  const auto tokens = entry.find("tokens");
  if (who.empty() || tokens == entry.end() || !tokens->is_object()) return std::nullopt;
  const auto token = tokens->find(who);
  if (token == tokens->end() || !token->is_string()) return std::nullopt;
  return token->get<std::string>();
}

std::string TokenCache::CurrentUser(const std::string& master) const {
  const nlohmann::json doc = LoadJsonFile(path_);
  return doc.contains(master) && doc[master].is_object() ? doc[master].value("user", "") : "";
}

Status TokenCache::Store(const std::string& master, const std::string& user,
                         const std::string& token) {
  return UpdateJsonFile(path_, "the token cache", /*strict=*/false, [&](nlohmann::json& doc) {
    if (!doc[master].is_object()) doc[master] = nlohmann::json::object();
    doc[master]["user"] = user;
    if (!doc[master]["tokens"].is_object()) doc[master]["tokens"] = nlohmann::json::object();
    doc[master]["tokens"][user] = token;
    return Status::Ok();
  });
}

Status TokenCache::Forget(const std::string& master, const std::string& user) {
  return UpdateJsonFile(path_, "the token cache", /*strict=*/false, [&](nlohmann::json& doc) {
    if (!doc.contains(master) || !doc[master].is_object()) return Status::Ok();
    if (doc[master]["tokens"].is_object()) doc[master]["tokens"].erase(user);
    if (doc[master].value("user", "") == user) doc[master].erase("user");
    return Status::Ok();
  });
}

Result<std::string> LoginAndCache(const CliOptions& options, const std::string& user,
                                  const std::string& password) {
  auto security = ResolveCliSecurity(options);
  if (!security.ok()) return security.status();
  DET_ASSIGN_OR_RETURN(const std::string gateway, GatewayEndpoint(options));
  DET_ASSIGN_OR_RETURN(const std::string master, SessionKey(options));
  zmq::context_t& context = ClientContext();
  // PBKDF2 makes a login take a moment: one attempt, a generous wait.
  bus::RpcClient client(context, gateway, *security,
                        {.timeout = std::chrono::seconds(15), .attempts = 1});
  auto reply = client.Call<bus::UserLoginRequest, bus::UserLoginReply>({user, password});
  ConfirmGatewayKey(options, client.answered(), security->server_public_key);
  if (!reply.ok()) {
    Result<bool> changed = GatewayChangedSince(options, reply.status(), client.handshake_failure());
    if (!changed.ok()) return changed.status();
    if (*changed) return LoginAndCache(options, user, password);  // where /info now says
  }
  if (!reply.ok()) return WithKeyAdvice(reply.status(), client, options);
  DET_RETURN_IF_ERROR(TokenCache().Store(master, reply->user.username, reply->token));
  return reply->token;
}

Result<std::string> ResolveToken(const CliOptions& options) {
  if (!options.token.empty()) return options.token;
  DET_ASSIGN_OR_RETURN(const std::string master, SessionKey(options));
  if (auto cached = TokenCache().Token(master, options.user)) return *cached;
  if (!options.user.empty() && !options.password.empty()) {
    return LoginAndCache(options, options.user, options.password);
  }
  return std::string();
}

std::optional<Result<std::string>> RenewToken(const CliOptions& options) {
  if (!options.token.empty() || options.user.empty() || options.password.empty()) {
    return std::nullopt;
  }
  return LoginAndCache(options, options.user, options.password);
}

}  // namespace det::cli

#include "cli/credentials.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bus/catalog/users.h"
#include "bus/rpc_client.h"

namespace det::cli {
namespace {

namespace fs = std::filesystem;

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// The whole cache; an unreadable or malformed file reads as empty (it is only a cache).
nlohmann::json Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return nlohmann::json::object();
  std::stringstream text;
  text << in.rdbuf();
  auto doc = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  return doc.is_object() ? doc : nlohmann::json::object();
}

// Replaces the file at once (write, then rename), readable by its owner only.
Status Save(const std::string& path, const nlohmann::json& doc) {
  std::error_code error;
  fs::create_directories(fs::path(path).parent_path(), error);
  const std::string tmp = path + ".tmp" + std::to_string(getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) return InvalidArgument("cannot write the token cache " + tmp);
  const std::string text = doc.dump(2) + "\n";
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!written || std::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return InvalidArgument("cannot write the token cache " + path);
  }
  return Status::Ok();
}

}  // namespace

std::string TokenCache::DefaultPath() {
  if (std::string file = Env("DET_AUTH_FILE"); !file.empty()) return file;
  if (std::string config = Env("XDG_CONFIG_HOME"); !config.empty()) {
    return config + "/det/auth.json";
  }
  return Env("HOME") + "/.config/det/auth.json";
}

std::optional<std::string> TokenCache::Token(const std::string& master,
                                             const std::string& user) const {
  const nlohmann::json doc = Load(path_);
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
  const nlohmann::json doc = Load(path_);
  return doc.contains(master) && doc[master].is_object() ? doc[master].value("user", "") : "";
}

Status TokenCache::Store(const std::string& master, const std::string& user,
                         const std::string& token) {
  nlohmann::json doc = Load(path_);
  if (!doc[master].is_object()) doc[master] = nlohmann::json::object();
  doc[master]["user"] = user;
  if (!doc[master]["tokens"].is_object()) doc[master]["tokens"] = nlohmann::json::object();
  doc[master]["tokens"][user] = token;
  return Save(path_, doc);
}

Status TokenCache::Forget(const std::string& master, const std::string& user) {
  nlohmann::json doc = Load(path_);
  if (!doc.contains(master) || !doc[master].is_object()) return Status::Ok();
  if (doc[master]["tokens"].is_object()) doc[master]["tokens"].erase(user);
  if (doc[master].value("user", "") == user) doc[master].erase("user");
  return Save(path_, doc);
}

Result<std::string> LoginAndCache(const CliOptions& options, const std::string& user,
                                  const std::string& password) {
  auto security = bus::ResolveClientSecurity(options.security);
  if (!security.ok()) return security.status();
  DET_ASSIGN_OR_RETURN(const std::string master, GatewayEndpoint(options));
  zmq::context_t& context = ClientContext();
  // PBKDF2 makes a login take a moment: one attempt, a generous wait.
  bus::RpcClient client(context, master, *security,
                        {.timeout = std::chrono::seconds(15), .attempts = 1});
  auto reply = client.Call<bus::UserLoginRequest, bus::UserLoginReply>({user, password});
  if (!reply.ok()) return WithKeyAdvice(reply.status(), client, options);
  DET_RETURN_IF_ERROR(TokenCache().Store(master, reply->user.username, reply->token));
  return reply->token;
}

Result<std::string> ResolveToken(const CliOptions& options) {
  if (!options.token.empty()) return options.token;
  DET_ASSIGN_OR_RETURN(const std::string master, GatewayEndpoint(options));
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

#include "bus/security.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <fstream>
#include <sstream>

#include "bus/socket.h"

namespace det::bus {
namespace {

constexpr std::string_view kZ85Alphabet =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

bool IsInproc(const std::string& endpoint) { return endpoint.starts_with("inproc://"); }

// Writes a new file beside `path` with `mode` from its creation (a secret is never readable by
// others, not even for a moment), following no link, then renames it over `path`.
Status WriteFile(const std::string& path, const std::string& text, mode_t mode) {
  const std::string fresh = path + ".new" + std::to_string(::getpid());
  const int fd = ::open(fresh.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) return InvalidArgument(path + ": cannot write: " + std::strerror(errno));
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) &&
                       ::fchmod(fd, mode) == 0;  // the umask may have taken bits away
  ::close(fd);
  if (!written || ::rename(fresh.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(fresh.c_str());
    return Internal(path + ": write failed: " + why);
  }
  return Status::Ok();
}

}  // namespace

bool IsZ85Key(std::string_view key) {
  if (key.size() != 40) return false;
  return key.find_first_not_of(kZ85Alphabet) == std::string_view::npos;
}

Result<CurveKeyPair> GenerateCurveKeyPair() {
  std::array<char, 41> public_key{};
  std::array<char, 41> secret_key{};
  if (zmq_curve_keypair(public_key.data(), secret_key.data()) != 0) {
    return FailedPrecondition(std::string("cannot generate a CURVE key pair: ") +
                              zmq_strerror(zmq_errno()) + " (libzmq built without CURVE?)");
  }
  return CurveKeyPair{public_key.data(), secret_key.data()};
}

Status WriteKeyPairFiles(const CurveKeyPair& keys, const std::string& base) {
  const std::string pub =
      "# det CURVE public key: give this to the master's allow-list\n"
      "public_key: \"" +
      keys.public_key + "\"\n";
  const std::string secret =
      "# det CURVE key pair: keep this file private\n"
      "public_key: \"" +
      keys.public_key +
      "\"\n"
      "secret_key: \"" +
      keys.secret_key + "\"\n";
  DET_RETURN_IF_ERROR(WriteFile(base + ".key", secret, 0600));
  return WriteFile(base + ".pub", pub, 0644);
}

Result<CurveKeyPair> ReadKeyFile(const std::string& path) {
  DET_ASSIGN_OR_RETURN(YAML::Node doc, LoadYamlFile(path));
  ConfigReader reader(doc, path);
  CurveKeyPair keys;
  reader.Read("public_key", &keys.public_key);
  reader.Read("secret_key", &keys.secret_key);
  DET_RETURN_IF_ERROR(reader.Finish());
  if (!IsZ85Key(keys.public_key)) {
    return InvalidArgument(path + ": public_key is missing or not a 40-character Z85 key");
  }
  if (!keys.secret_key.empty() && !IsZ85Key(keys.secret_key)) {
    return InvalidArgument(path + ": secret_key is not a 40-character Z85 key");
  }
  return keys;
}

Result<std::vector<AllowedClient>> ReadAllowList(const std::string& path) {
  static const std::set<std::string> kRoles = {kRoleCli, kRoleAgent, kRoleAutoscaler};
  std::ifstream in(path);
  if (!in) return InvalidArgument(path + ": cannot read the allow-list: " + std::strerror(errno));
  std::vector<AllowedClient> clients;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    // A comment starts a line or follows a space ('#' is also a Z85 character).
    for (size_t at = line.find('#'); at != std::string::npos; at = line.find('#', at + 1)) {
      if (at == 0 || line[at - 1] == ' ' || line[at - 1] == '\t') {
        line.erase(at);
        break;
      }
    }
    if (auto colon = line.find("public_key:"); colon != std::string::npos) {
      line = line.substr(colon + 11);
    }
    for (char& c : line) {
      if (c == '"' || c == ',' || c == '\t' || c == '\r') c = ' ';
    }
    std::istringstream words(line);
    AllowedClient client;
    if (!(words >> client.public_key)) continue;
    const std::string where = path + ": line " + std::to_string(number);
    if (!IsZ85Key(client.public_key)) {
      return InvalidArgument(where + ": not a 40-character Z85 public key");
    }
    for (std::string role; words >> role;) {
      if (!kRoles.count(role)) {
        return InvalidArgument(where + ": unknown role \"" + role +
                               "\" (roles: cli, agent, autoscaler)");
      }
      client.roles.insert(role);
    }
    clients.push_back(std::move(client));
  }
  return clients;
}

void SecurityConfig::Read(ConfigReader& reader) {
  reader.Read("plaintext", &plaintext);
  reader.Read("key_file", &key_file);
  reader.Read("server_public_key_file", &server_public_key_file);
  reader.Read("allowed_clients_file", &allowed_clients_file);
  reader.Read("cli_keys", &cli_keys);
  if (cli_keys != "any" && cli_keys != "allow_list") {
    reader.Fail("cli_keys", "expected any or allow_list, got \"" + cli_keys + "\"");
  }
}

Result<SocketSecurity> ResolveServerSecurity(const SecurityConfig& config) {
  SocketSecurity security;
  if (config.plaintext) return security;
  if (config.key_file.empty()) {
    return InvalidArgument(
        "bus.security.key_file: required, since CURVE is on by default; create a key pair with "
        "`det keygen master`, or set bus.security.plaintext: true to run without encryption");
  }
  DET_ASSIGN_OR_RETURN(security.own, ReadKeyFile(config.key_file));
  if (security.own.secret_key.empty()) {
    return InvalidArgument("bus.security.key_file: " + config.key_file +
                           " has no secret_key (use the .key file, not the .pub)");
  }
  if (config.allowed_clients_file.empty()) {
    return InvalidArgument(
        "bus.security.allowed_clients_file: required with CURVE: list the "
        "public keys of the agents and tools allowed to connect");
  }
  DET_ASSIGN_OR_RETURN(security.allowed_clients, ReadAllowList(config.allowed_clients_file));
  if (config.cli_keys == "any") security.open_roles.insert(kRoleCli);
  security.mode = SocketSecurity::Mode::kCurveServer;
  return security;
}

Result<SocketSecurity> ResolveClientSecurity(const SecurityConfig& config) {
  SocketSecurity security;
  if (config.plaintext) return security;
  if (config.key_file.empty() || config.server_public_key_file.empty()) {
    return InvalidArgument(
        "bus.security.key_file and bus.security.server_public_key_file: required, since CURVE "
        "is on by default; create a key pair with `det keygen NAME` and add its public key to the "
        "master's allow-list, or set bus.security.plaintext: true");
  }
  DET_ASSIGN_OR_RETURN(security.own, ReadKeyFile(config.key_file));
  if (security.own.secret_key.empty()) {
    return InvalidArgument("bus.security.key_file: " + config.key_file + " has no secret_key");
  }
  DET_ASSIGN_OR_RETURN(CurveKeyPair server, ReadKeyFile(config.server_public_key_file));
  security.server_public_key = server.public_key;
  security.mode = SocketSecurity::Mode::kCurveClient;
  return security;
}

void ApplySecurity(zmq::socket_t& socket, const SocketSecurity& security,
                   const std::string& endpoint) {
  if (IsInproc(endpoint)) return;
  switch (security.mode) {
    case SocketSecurity::Mode::kPlaintext:
      return;
    case SocketSecurity::Mode::kCurveServer:
      socket.set(zmq::sockopt::zap_domain,
                 security.role.empty() ? kDefaultZapDomain : security.role);
      socket.set(zmq::sockopt::curve_server, 1);
      socket.set(zmq::sockopt::curve_secretkey, security.own.secret_key);
      return;
    case SocketSecurity::Mode::kCurveClient:
      socket.set(zmq::sockopt::curve_serverkey, security.server_public_key);
      socket.set(zmq::sockopt::curve_publickey, security.own.public_key);
      socket.set(zmq::sockopt::curve_secretkey, security.own.secret_key);
      return;
  }
}

}  // namespace det::bus

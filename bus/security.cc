#include "bus/security.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <array>
#include <cstring>
#include <fstream>
#include <sstream>

#include "bus/drop_log.h"
#include "bus/socket.h"

namespace det::bus {
namespace {

constexpr std::string_view kZ85Alphabet =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
constexpr const char* kZapEndpoint = "inproc://zeromq.zap.01";
constexpr const char* kZapDomain = "det";

bool IsInproc(const std::string& endpoint) { return endpoint.starts_with("inproc://"); }

Status WriteFile(const std::string& path, const std::string& text, mode_t mode) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) return InvalidArgument(path + ": cannot write: " + std::strerror(errno));
  out << text;
  out.close();
  if (!out) return Internal(path + ": write failed");
  if (::chmod(path.c_str(), mode) != 0) {
    return Internal(path + ": chmod failed: " + std::strerror(errno));
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
      socket.set(zmq::sockopt::zap_domain, security.role.empty() ? kZapDomain : security.role);
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

ZapHandler::ZapHandler(zmq::context_t& context, std::vector<AllowedClient> allowed)
    : socket_(context, zmq::socket_type::rep) {
  for (AllowedClient& client : allowed) {
    allowed_[client.public_key].insert(client.roles.begin(), client.roles.end());
  }
  socket_.set(zmq::sockopt::linger, 0);
  socket_.bind(kZapEndpoint);
  thread_ = std::thread([this] { Run(); });
}

ZapHandler::ZapHandler(zmq::context_t& context, const std::vector<std::string>& allowed_public_keys)
    : ZapHandler(context, [&] {
        std::vector<AllowedClient> all;
        for (const std::string& key : allowed_public_keys) all.push_back({key, {}});
        return all;
      }()) {}

ZapHandler::~ZapHandler() {
  stop_ = true;
  thread_.join();
}

void ZapHandler::Allow(const std::string& public_key) {
  std::lock_guard lock(mu_);
  allowed_[public_key].clear();
}

std::string ZapHandler::WhyRefused(const std::string& z85, const std::string& domain) const {
  std::lock_guard lock(mu_);
  auto it = allowed_.find(z85);
  if (it == allowed_.end()) return "unknown CURVE key " + z85;
  const std::set<std::string>& roles = it->second;
  if (roles.empty() || domain == kZapDomain || roles.count(domain)) return "";
  std::string held;
  for (const std::string& role : roles) held += (held.empty() ? "" : ",") + role;
  return "CURVE key " + z85 + " (roles " + held + ") may not use the " + domain + " port";
}

void ZapHandler::Run() {
  DropLog refusals("bus ZAP handler", RealClock::Instance());
  while (!stop_) {
    zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    if (Poll(&item, 1, std::chrono::milliseconds(50)) == 0) continue;
    std::vector<zmq::message_t> frames;
    zmq::message_t frame;
    do {
      if (!socket_.recv(frame, zmq::recv_flags::none)) break;
      bool more = frame.more();
      frames.push_back(std::move(frame));
      if (!more) break;
    } while (true);
    // Request: version, request id, domain, address, routing id, mechanism, credentials...
    std::string request_id = frames.size() > 1 ? frames[1].to_string() : "";
    std::string mechanism = frames.size() > 5 ? frames[5].to_string() : "";
    std::string address = frames.size() > 3 ? frames[3].to_string() : "?";
    const std::string domain = frames.size() > 2 ? frames[2].to_string() : "";
    bool ok = false;
    if (mechanism == "CURVE" && frames.size() >= 7 && frames[6].size() == 32) {
      std::array<char, 41> z85{};
      zmq_z85_encode(z85.data(), frames[6].data<uint8_t>(), 32);
      const std::string why = WhyRefused(z85.data(), domain);
      ok = why.empty();
      if (!ok) refusals.Record(address, PermissionDenied(why));
    } else {
      refusals.Record(address,
                      PermissionDenied("mechanism " + mechanism + " refused: CURVE required"));
    }
    (ok ? admitted_ : denied_)++;
    socket_.send(zmq::str_buffer("1.0"), zmq::send_flags::sndmore);
    socket_.send(zmq::buffer(request_id), zmq::send_flags::sndmore);
    socket_.send(ok ? zmq::str_buffer("200") : zmq::str_buffer("400"), zmq::send_flags::sndmore);
    socket_.send(ok ? zmq::str_buffer("OK") : zmq::str_buffer("unknown client key"),
                 zmq::send_flags::sndmore);
    socket_.send(zmq::str_buffer(""), zmq::send_flags::sndmore);
    socket_.send(zmq::str_buffer(""), zmq::send_flags::none);
  }
}

}  // namespace det::bus

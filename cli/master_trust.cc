#include "cli/master_trust.h"

#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <map>

#include "cli/config_files.h"
#include "common/environment.h"

namespace det::cli {

std::string KnownMasters::DefaultPath() {
  return ConfigFile("known_masters.json", "DET_KNOWN_MASTERS_FILE");
}

namespace {

// The key kept for `url` in `doc` ("" when none): an entry, or a bare key as first written.
std::string KeptKey(const nlohmann::json& doc, const std::string& url) {
  const auto kept = doc.find(url);
  if (kept == doc.end()) return "";
  if (kept->is_string()) return kept->get<std::string>();
  return kept->is_object() ? kept->value("key", "") : "";
}

}  // namespace

std::optional<MasterGateway> KnownMasters::Find(const std::string& url) const {
  const Result<nlohmann::json> loaded = LoadJsonFileStrictly(path_);
  if (!loaded.ok()) return std::nullopt;  // Check, asked next, says why
  const nlohmann::json& doc = *loaded;
  const auto kept = doc.find(url);
  if (kept == doc.end() || !kept->is_object()) return std::nullopt;
  MasterGateway gateway{kept->value("gateway", ""), kept->value("key", "")};
  if (gateway.endpoint.empty() || !bus::IsZ85Key(gateway.public_key)) return std::nullopt;
  return gateway;
}

Status KnownMasters::Remember(const std::string& url, const MasterGateway& gateway, bool vouched) {
  return UpdateJsonFile(path_, "the masters' keys", /*strict=*/true, [&](nlohmann::json& doc) {
    const std::string kept = KeptKey(doc, url);
    if (!vouched && !kept.empty() && kept != gateway.public_key) {
      return KeyChanged(url, kept, gateway.public_key);
    }
    doc[url] = {{"key", gateway.public_key}, {"gateway", gateway.endpoint}};
    return Status::Ok();
  });
}

std::string KnownMasters::Kept(const std::string& url) const {
  const Result<nlohmann::json> loaded = LoadJsonFileStrictly(path_);
  return loaded.ok() ? KeptKey(*loaded, url) : "";
}

Status KnownMasters::Check(const std::string& url, const std::string& key, bool* first_use) const {
  DET_ASSIGN_OR_RETURN(const nlohmann::json doc, LoadJsonFileStrictly(path_));
  const std::string kept = KeptKey(doc, url);
  *first_use = kept.empty();
  if (kept.empty() || kept == key) return Status::Ok();
  return KeyChanged(url, kept, key);
}

Status KnownMasters::KeyChanged(const std::string& url, const std::string& kept,
                                const std::string& key) const {
  return PermissionDenied(
      "the master at " + url + " now presents gateway key " + key + ", not " + kept +
      " as first seen (kept in " + path_ +
      "). Another master may answer at this address. If this master was redeployed with new "
      "keys, forget the old one with `det master forget-key` (or remove its line from " +
      path_ + ") and run det again");
}

Status KnownMasters::Forget(const std::string& url) {
  return UpdateJsonFile(path_, "the masters' keys", /*strict=*/true, [&](nlohmann::json& doc) {
    doc.erase(url);
    return Status::Ok();
  });
}

Status KnownMasters::Trust(const std::string& url, const std::string& key) {
  return UpdateJsonFile(path_, "the masters' keys", /*strict=*/true, [&](nlohmann::json& doc) {
    doc[url] = {{"key", key}};
    return Status::Ok();
  });
}

Result<bus::CurveKeyPair> OwnClientKey(const std::string& key_file) {
  const std::string path =
      key_file.empty() ? ConfigFile("client.key", "DET_CLIENT_KEY_FILE") : key_file;
  if (key_file.empty() && !std::filesystem::exists(path)) {
    if (!path.ends_with(".key")) {
      return InvalidArgument("DET_CLIENT_KEY_FILE: " + path + " must end in .key");
    }
    const std::string base = path.substr(0, path.size() - 4);
    DET_RETURN_IF_ERROR(MakePrivateFolder(std::filesystem::path(path).parent_path().string()));
    // Made aside, then linked into place: of two det processes starting at once, one key wins
    // and both use it.
    const std::string fresh = base + ".new" + std::to_string(::getpid());
    DET_ASSIGN_OR_RETURN(bus::CurveKeyPair made, bus::GenerateCurveKeyPair());
    DET_RETURN_IF_ERROR(bus::WriteKeyPairFiles(made, fresh));
    if (::link((fresh + ".key").c_str(), path.c_str()) == 0) {
      ::rename((fresh + ".pub").c_str(), (base + ".pub").c_str());
    }
    ::unlink((fresh + ".key").c_str());
    ::unlink((fresh + ".pub").c_str());
  }
  DET_ASSIGN_OR_RETURN(bus::CurveKeyPair own, bus::ReadKeyFile(path));
  if (own.secret_key.empty()) return InvalidArgument(path + " has no secret_key");
  return own;
}

namespace {

// First-use keys from /info, by master URL, not yet proven by their gateway in this process.
std::map<std::string, MasterGateway>& UnprovenKeys() {
  static std::map<std::string, MasterGateway> unproven;  // det is one thread
  return unproven;
}

// Where options.master's gateway is and its key, trusted: from the kept entry when there is one
// (no request), else from the master's /info, checked against the key kept (http, or https
// without a certificate check) and kept.
Result<MasterGateway> TrustedGateway(const CliOptions& options, bool ask_again) {
  KnownMasters known;
  if (!ask_again) {
    if (std::optional<MasterGateway> kept = known.Find(options.master)) return *kept;
  }
  DET_ASSIGN_OR_RETURN(MasterGateway gateway, GatewayOfUrl(options, ask_again));
  if (gateway.public_key.empty()) {
    // Never unencrypted unless asked: a master that says so may be another one at its address.
    const std::string kept = known.Kept(options.master);
    return PermissionDenied(
        "the master at " + options.master + " says its gateway runs in plaintext" +
        (kept.empty() ? std::string(": add --plaintext (DET_PLAINTEXT=1) to talk to it "
                                    "unencrypted")
                      : ", where it presented gateway key " + kept + " before (kept in " +
                            known.path() + "): another master may answer at this address"));
  }
  const bool vouched = options.master.starts_with("https://") &&
                       Environment::Process().GetOr("DET_MASTER_CERT_FILE", "") != "noverify";
  if (!vouched) {
    bool first_use = false;
    DET_RETURN_IF_ERROR(known.Check(options.master, gateway.public_key, &first_use));
    if (first_use) {
      // Kept once the gateway has proven it holds the key (ConfirmGatewayKey): a key that no
      // gateway answers with is never kept to refuse the real one later.
      UnprovenKeys()[options.master] = gateway;
      return gateway;
    }
  }
  // Only a cache of where the gateway is: a det that cannot write it asks /info every time.
  (void)known.Remember(options.master, gateway, vouched);
  return gateway;
}

// The gateways det's calls use in this process, by master URL, once resolved.
std::map<std::string, MasterGateway>& ResolvedGateways() {
  static std::map<std::string, MasterGateway> resolved;  // det is one thread
  return resolved;
}

}  // namespace

Result<bus::SocketSecurity> ResolveCliSecurity(const CliOptions& options) {
  const bus::SecurityConfig& config = options.security;
  const bool explicit_keys = !config.key_file.empty() && !config.server_public_key_file.empty();
  if (config.plaintext || explicit_keys) return bus::ResolveClientSecurity(config);
  if (!IsMasterUrl(options.master)) {
    return InvalidArgument(
        "det needs the master's URL to find its gateway's key: set DET_MASTER (or -m) to "
        "http(s)://host:port, its REST address, and log in; or give DET_KEY_FILE and "
        "DET_MASTER_KEY_FILE for a master that admits only allow-listed keys, or --plaintext");
  }
  DET_ASSIGN_OR_RETURN(MasterGateway gateway, UrlGateway(options));
  bus::SocketSecurity security;
  if (!config.server_public_key_file.empty()) {
    DET_ASSIGN_OR_RETURN(bus::CurveKeyPair server, bus::ReadKeyFile(config.server_public_key_file));
    gateway.public_key = server.public_key;
  }
  DET_ASSIGN_OR_RETURN(security.own, OwnClientKey(config.key_file));
  security.server_public_key = gateway.public_key;
  security.mode = bus::SocketSecurity::Mode::kCurveClient;
  return security;
}

Result<MasterGateway> UrlGateway(const CliOptions& options) {
  auto resolved = ResolvedGateways().find(options.master);
  if (resolved == ResolvedGateways().end()) {
    DET_ASSIGN_OR_RETURN(MasterGateway gateway, TrustedGateway(options, /*ask_again=*/false));
    resolved = ResolvedGateways().emplace(options.master, gateway).first;
  }
  return resolved->second;
}

Result<bool> GatewayChangedSince(const CliOptions& options, const Status& failure,
                                 std::optional<bus::HandshakeFailure> handshake) {
  // The gateway has another key now, or none: the master's /info, asked again, says which.
  const bool wrong_key = handshake == bus::HandshakeFailure::kServerKeyMismatch ||
                         handshake == bus::HandshakeFailure::kServerIsPlaintext;
  auto used = ResolvedGateways().find(options.master);
  if (used == ResolvedGateways().end() ||
      (failure.code() != StatusCode::kUnavailable && !wrong_key)) {
    return false;
  }
  Result<MasterGateway> now = TrustedGateway(options, /*ask_again=*/true);
  if (!now.ok()) {
    if (wrong_key) return now.status();  // another key at this URL: the refusal names both
    return false;                        // the master is out of reach too: the first failure
  }
  if (now->endpoint == used->second.endpoint && now->public_key == used->second.public_key) {
    return false;
  }
  used->second = *now;
  return true;
}

void ConfirmGatewayKey(const CliOptions& options, bool answered, const std::string& used_key) {
  auto unproven = UnprovenKeys().find(options.master);
  if (unproven == UnprovenKeys().end() || !answered) return;  // nothing proven yet
  if (unproven->second.public_key != used_key) {  // the key came from DET_MASTER_KEY_FILE
    UnprovenKeys().erase(unproven);
    return;
  }
  const MasterGateway gateway = unproven->second;
  UnprovenKeys().erase(unproven);
  KnownMasters known;
  const Status kept = known.Remember(options.master, gateway, /*vouched=*/false);
  if (!kept.ok()) {
    std::cerr << "det: warning: " << kept.message() << "\n";
    return;
  }
  std::cerr << "det: the master at " << options.master << " presents gateway key "
            << gateway.public_key << "; trusted from now on (kept in " << known.path() << ")\n";
}

}  // namespace det::cli

#include "cli/master_trust.h"

#include <filesystem>
#include <iostream>

#include "cli/config_files.h"

namespace det::cli {

std::string KnownMasters::DefaultPath() {
  return ConfigFile("known_masters.json", "DET_KNOWN_MASTERS_FILE");
}

Status KnownMasters::Check(const std::string& url, const std::string& key, bool* first_use) {
  nlohmann::json doc = LoadJsonFile(path_);
  const auto kept = doc.find(url);
  if (kept != doc.end() && kept->is_string()) {
    *first_use = false;
    if (kept->get<std::string>() == key) return Status::Ok();
    return PermissionDenied(
        "the master at " + url + " now presents gateway key " + key + ", not " +
        kept->get<std::string>() + " as first seen (kept in " + path_ +
        "). Another master may answer at this address. If this master was redeployed with new "
        "keys, forget the old one with `det master forget-key` (or remove its line from " +
        path_ + ") and run det again");
  }
  *first_use = true;
  doc[url] = key;
  return SaveJsonFile(path_, doc, "the masters' keys");
}

Status KnownMasters::Forget(const std::string& url) {
  nlohmann::json doc = LoadJsonFile(path_);
  if (!doc.contains(url)) return Status::Ok();
  doc.erase(url);
  return SaveJsonFile(path_, doc, "the masters' keys");
}

Status KnownMasters::Trust(const std::string& url, const std::string& key) {
  nlohmann::json doc = LoadJsonFile(path_);
  doc[url] = key;
  return SaveJsonFile(path_, doc, "the masters' keys");
}

Result<bus::CurveKeyPair> OwnClientKey(const std::string& key_file) {
  const std::string path =
      key_file.empty() ? ConfigFile("client.key", "DET_CLIENT_KEY_FILE") : key_file;
  if (key_file.empty() && !std::filesystem::exists(path)) {
    DET_ASSIGN_OR_RETURN(bus::CurveKeyPair made, bus::GenerateCurveKeyPair());
    std::error_code ignored;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ignored);
    std::string base = path;
    if (base.ends_with(".key")) base.resize(base.size() - 4);
    DET_RETURN_IF_ERROR(bus::WriteKeyPairFiles(made, base));
  }
  DET_ASSIGN_OR_RETURN(bus::CurveKeyPair own, bus::ReadKeyFile(path));
  if (own.secret_key.empty()) return InvalidArgument(path + " has no secret_key");
  return own;
}

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
  DET_ASSIGN_OR_RETURN(MasterGateway gateway, GatewayOfUrl(options));
  bus::SocketSecurity security;
  if (!config.server_public_key_file.empty()) {
    DET_ASSIGN_OR_RETURN(bus::CurveKeyPair server, bus::ReadKeyFile(config.server_public_key_file));
    gateway.public_key = server.public_key;
  } else if (gateway.public_key.empty()) {
    return security;  // the master says it runs in plaintext
  } else if (!options.master.starts_with("https://")) {
    bool first_use = false;
    KnownMasters known;
    DET_RETURN_IF_ERROR(known.Check(options.master, gateway.public_key, &first_use));
    if (first_use) {
      std::cerr << "det: the master at " << options.master << " presents gateway key "
                << gateway.public_key << "; trusted from now on (kept in " << known.path() << ")\n";
    }
  }
  DET_ASSIGN_OR_RETURN(security.own, OwnClientKey(config.key_file));
  security.server_public_key = gateway.public_key;
  security.mode = bus::SocketSecurity::Mode::kCurveClient;
  return security;
}

}  // namespace det::cli

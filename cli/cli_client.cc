#include "cli/cli_client.h"

#include <cstdio>
#include <iostream>
#include <map>
#include <thread>

#include "bus/catalog/cluster_json.h"
#include "bus/catalog/master.h"
#include "cli/master_trust.h"
#include "cli/master_url.h"
#include "cli/output.h"
#include "cli/rpc_call.h"
#include "common/environment.h"

namespace det::cli {

std::string GatewayEndpoint(const std::string& master) {
  std::string address = master;
  if (address.starts_with("tcp://")) address = address.substr(6);
  if (address.find(':') == std::string::npos) address += ":8090";
  return "tcp://" + address;
}

Result<MasterGateway> GatewayOfUrl(const CliOptions& options, bool ask_again) {
  static std::map<std::string, Result<MasterGateway>> resolved;  // det is one thread
  auto known = resolved.find(options.master);
  if (ask_again && known != resolved.end()) {
    resolved.erase(known);
    known = resolved.end();
  }
  if (known == resolved.end()) {
    const Environment env = Environment::Process();
    const MasterTls tls{env.GetOr("DET_MASTER_CERT_FILE", ""), env.GetOr("DET_MASTER_CERT", "")};
    known = resolved.emplace(options.master, GatewayOfMasterUrl(options.master, tls)).first;
  }
  return known->second;
}

Result<std::string> SessionKey(const CliOptions& options) {
  if (IsMasterUrl(options.master)) return options.master;
  return GatewayEndpoint(options);
}

Result<std::string> GatewayEndpoint(const CliOptions& options) {
  if (!IsMasterUrl(options.master)) return GatewayEndpoint(options.master);
  const bus::SecurityConfig& config = options.security;
  const bool keys_given = !config.key_file.empty() && !config.server_public_key_file.empty();
  DET_ASSIGN_OR_RETURN(MasterGateway gateway, config.plaintext || keys_given ? GatewayOfUrl(options)
                                                                             : UrlGateway(options));
  return gateway.endpoint;
}

zmq::context_t& ClientContext() {
  static zmq::context_t* context = new zmq::context_t();  // never deleted (see the header)
  return *context;
}

Status WithKeyAdvice(Status status, const bus::RpcClient& client, const CliOptions& options) {
  const std::optional<bus::HandshakeFailure> failure = client.handshake_failure();
  if (status.ok() || !failure) return status;
  const std::string master = "the master at " + GatewayEndpoint(options).value_or(options.master);
  const std::string& key_file = options.security.key_file;
  const std::string& master_key = options.security.server_public_key_file;
  switch (*failure) {
    case bus::HandshakeFailure::kServerRequiresCurve:
      return PermissionDenied(master +
                              " requires CURVE keys: give det the master's URL "
                              "(DET_MASTER=http://host:8080, its REST address), which tells det "
                              "its key, or set DET_KEY_FILE and DET_MASTER_KEY_FILE");
    case bus::HandshakeFailure::kServerKeyMismatch:
      if (master_key.empty() && IsMasterUrl(options.master)) {
        return PermissionDenied(
            master + " ended the handshake: it does not hold the key " + options.master +
            "/info names, so what answers at that URL is not this gateway's master (no key first "
            "seen there was kept): check DET_MASTER");
      }
      return PermissionDenied(
          master + " ended the handshake: its public key does not match " +
          (master_key.empty() ? std::string("DET_MASTER_KEY_FILE") : master_key) +
          " (DET_MASTER_KEY_FILE must be the master's .pub file; det deploy local status prints "
          "it)");
    case bus::HandshakeFailure::kClientKeyRefused:
      return PermissionDenied(
          master + " does not know this client key" +
          (key_file.empty() ? std::string() : " (" + key_file + ")") +
          ": add its public key with the role cli to the master's allowed_clients_file, or let "
          "the gateway admit any key (bus.security.cli_keys: any; logins still say who calls)");
    case bus::HandshakeFailure::kServerIsPlaintext:
      return PermissionDenied(master +
                              " runs in plaintext and det used CURVE keys: add --plaintext (or "
                              "unset DET_KEY_FILE and DET_MASTER_KEY_FILE)");
  }
  return status;
}

int MasterInfo(const CliOptions& options) {
  auto info = Call<bus::MasterInfoRequest, bus::MasterInfo>(options, {});
  if (!info.ok()) return Fail(info.status());
  if (options.machine_readable()) {
    PrintReply(options, bus::ToJson(*info));
    return 0;
  }
  std::cout << "version:    " << info->version << "\ncluster:    " << info->cluster_name
            << "\ncluster id: " << info->cluster_id << "\nmaster id:  " << info->master_id << "\n";
  return 0;
}

int MasterLogs(const CliOptions& options, bool follow) {
  constexpr int32_t kPage = 1000;
  int64_t after = 0;
  while (true) {
    auto reply = Call<bus::MasterLogsRequest, bus::MasterLogsReply>(options, {after, kPage});
    if (!reply.ok()) return Fail(reply.status());
    for (const auto& line : reply->lines) {
      if (options.machine_readable()) {
        PrintReply(options, bus::ToJson(line));
      } else {
        std::cout << UtcTime(line.timestamp) << " " << line.level << " " << line.message << "\n";
      }
      after = line.id;
    }
    std::cout.flush();
    if (reply->lines.size() == static_cast<size_t>(kPage)) continue;  // more are waiting
    if (!follow) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

int MasterForgetKey(const CliOptions& options) {
  if (!IsMasterUrl(options.master)) {
    return Fail(
        InvalidArgument("det keeps gateway keys per master URL; give the master as "
                        "http://host:port (-m or DET_MASTER), not " +
                        options.master));
  }
  KnownMasters known;
  if (Status forgotten = known.Forget(options.master); !forgotten.ok()) return Fail(forgotten);
  std::cout << "forgot the gateway key of " << options.master << " (in " << known.path() << ")\n";
  return 0;
}

int KeyGen(const std::string& base) {
  auto keys = bus::GenerateCurveKeyPair();
  if (!keys.ok()) return Fail(keys.status());
  if (Status written = bus::WriteKeyPairFiles(*keys, base); !written.ok()) return Fail(written);
  std::cout << "wrote " << base << ".key (private) and " << base
            << ".pub\npublic key: " << keys->public_key << "\n";
  return 0;
}

}  // namespace det::cli

#include "cli/cli_client.h"

#include <cstdio>
#include <iostream>
#include <thread>

#include "bus/catalog/cluster_json.h"
#include "bus/catalog/master.h"
#include "cli/output.h"
#include "cli/rpc_call.h"

namespace det::cli {

std::string GatewayEndpoint(const std::string& master) {
  std::string address = master;
  if (address.starts_with("tcp://")) address = address.substr(6);
  if (address.find(':') == std::string::npos) address += ":8090";
  return "tcp://" + address;
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

int KeyGen(const std::string& base) {
  auto keys = bus::GenerateCurveKeyPair();
  if (!keys.ok()) return Fail(keys.status());
  if (Status written = bus::WriteKeyPairFiles(*keys, base); !written.ok()) return Fail(written);
  std::cout << "wrote " << base << ".key (private) and " << base
            << ".pub\npublic key: " << keys->public_key << "\n";
  return 0;
}

}  // namespace det::cli

#include "cli/cli_client.h"

#include <cstdio>
#include <iostream>

#include "bus/catalog/cluster_json.h"
#include "bus/catalog/master.h"
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
  if (options.json) {
    std::cout << bus::ToJson(*info).dump() << "\n";
    return 0;
  }
  std::cout << "version:    " << info->version << "\ncluster:    " << info->cluster_name
            << "\ncluster id: " << info->cluster_id << "\nmaster id:  " << info->master_id << "\n";
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

#include "cli/cli_client.h"

#include <cstdio>
#include <iostream>

#include "bus/catalog/master.h"
#include "common/logging.h"

namespace det::cli {
namespace {

int Fail(const Status& status) {
  std::cerr << "error: " << status.message() << "\n";
  return status.code() == StatusCode::kUnavailable ? 3 : 1;
}

template <class Req, class Rep>
Result<Rep> Call(const CliOptions& options, const Req& request) {
  auto security = bus::ResolveClientSecurity(options.security);
  if (!security.ok()) return security.status();
  zmq::context_t context;
  bus::RpcClient client(context, GatewayEndpoint(options.master), *security);
  return client.Call<Req, Rep>(request);
}

}  // namespace

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
    std::cout << "{\"version\":\"" << JsonEscape(info->version) << "\",\"cluster_name\":\""
              << JsonEscape(info->cluster_name) << "\",\"cluster_id\":\""
              << JsonEscape(info->cluster_id) << "\",\"master_id\":\"" << info->master_id
              << "\",\"started_at\":" << info->started_at << "}\n";
    return 0;
  }
  std::cout << "version:    " << info->version << "\ncluster:    " << info->cluster_name
            << "\ncluster id: " << info->cluster_id << "\nmaster id:  " << info->master_id << "\n";
  return 0;
}

int AgentList(const CliOptions& options) {
  auto list = Call<bus::AgentListRequest, bus::AgentList>(options, {});
  if (!list.ok()) return Fail(list.status());
  if (options.json) {
    std::cout << "[";
    for (size_t i = 0; i < list->agents.size(); ++i) {
      const auto& a = list->agents[i];
      std::cout << (i ? "," : "") << "{\"id\":\"" << JsonEscape(a.id) << "\",\"state\":\""
                << a.state << "\",\"resource_pool\":\"" << JsonEscape(a.resource_pool)
                << "\",\"slots\":" << a.slots.size() << "}";
    }
    std::cout << "]\n";
    return 0;
  }
  std::printf("%-24s %-10s %-16s %5s  %s\n", "AGENT ID", "STATE", "RESOURCE POOL", "SLOTS",
              "LAST HEARD");
  for (const auto& a : list->agents) {
    std::printf("%-24s %-10s %-16s %5zu  %lld ms ago\n", a.id.c_str(), a.state.c_str(),
                a.resource_pool.c_str(), a.slots.size(),
                static_cast<long long>(a.last_heard_ms_ago));
  }
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

#include "master/cli_gateway.h"

#include "master/agent_registry.h"

namespace det::master {

CliGateway::CliGateway(zmq::context_t& context, const Clock& clock, bus::MasterInfo info,
                       int64_t max_message_bytes)
    : info_(std::move(info)),
      server_(context, "master", clock, bus::SocketLimits{.max_message_bytes = max_message_bytes}),
      registry_(context, AgentRegistry::kQueryEndpoint, {},
                bus::RpcClientConfig{.timeout = std::chrono::seconds(2), .attempts = 1}) {
  server_.Handle<bus::MasterInfoRequest, bus::MasterInfo>(
      [this](const bus::RpcContext&, const bus::MasterInfoRequest&) -> Result<bus::MasterInfo> {
        return info_;
      });
  server_.Handle<bus::AgentListRequest, bus::AgentList>(
      [this](const bus::RpcContext& ctx, const bus::AgentListRequest& request) {
        return registry_.Call<bus::AgentListRequest, bus::AgentList>(request, ctx.token);
      });
}

CliGateway::~CliGateway() { Stop(); }

Result<std::string> CliGateway::Bind(const std::string& endpoint,
                                     const bus::SocketSecurity& security) {
  return server_.Bind(endpoint, security);
}

void CliGateway::Start() {
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
}

void CliGateway::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void CliGateway::Run() {
  while (!stop_) {
    zmq::pollitem_t item{server_.socket().handle(), 0, ZMQ_POLLIN, 0};
    bus::Poll(&item, 1, std::chrono::milliseconds(100));
    if (item.revents & ZMQ_POLLIN) server_.Receive();
  }
}

}  // namespace det::master

#include "agent/agent.h"

#include <spdlog/spdlog.h>

#include <thread>

#include "common/process.h"
#include "common/version.h"

namespace det::agent {

Agent::Agent(AgentConfig config, const Clock& clock) : config_(std::move(config)), clock_(clock) {}

bus::AgentRegister Agent::Registration() const {
  bus::AgentRegister reg{kVersion, config_.resource_pool, HostName(), {}};
  // Real device discovery (CPUs, nvidia-smi) arrives with the master-and-agents issue; until then
  // an agent offers its artificial slots, or one CPU slot.
  const int slots = config_.artificial_slots > 0 ? config_.artificial_slots : 1;
  for (int i = 0; i < slots; ++i) reg.slots.push_back({"cpu" + std::to_string(i), "cpu", "CPU"});
  return reg;
}

int Agent::Run(const std::atomic<bool>& stop) {
  auto security = bus::ResolveClientSecurity(config_.security);
  if (!security.ok()) {
    spdlog::critical("{}", security.status().message());
    return 2;
  }
  bus::BackoffPolicy backoff{config_.agent_reconnect_backoff, std::chrono::minutes(1)};
  channel_ = std::make_unique<bus::AgentChannelClient>(
      context_, config_.agent_id, bus::TcpEndpoint(config_.master_host, config_.master_port),
      *security, clock_, config_.channel, backoff, config_.agent_reconnect_attempts);
  if (Status started = channel_->Start(); !started.ok()) {
    spdlog::critical("{}", started.message());
    return 2;
  }
  spdlog::info("det-agent {} ({}) joining master {}:{}", kVersion, config_.agent_id,
               config_.master_host, config_.master_port);
  std::vector<bus::AgentChannelClient::Event> events;
  while (!stop.load()) {
    if (channel_->state() == bus::AgentChannelClient::State::kGaveUp) {
      spdlog::error("gave up reconnecting to the master after {} attempts",
                    config_.agent_reconnect_attempts);
      return 3;
    }
    zmq::socket_t* socket = channel_->socket();
    if (socket) {
      zmq::pollitem_t item{socket->handle(), 0, ZMQ_POLLIN, 0};
      bus::Poll(&item, 1, std::chrono::milliseconds(100));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    events.clear();
    channel_->Receive(&events);
    channel_->Tick(&events);
    for (auto& event : events) OnEvent(event);
  }
  return 0;
}

void Agent::OnEvent(bus::AgentChannelClient::Event& event) {
  using Kind = bus::AgentChannelClient::Event::Kind;
  switch (event.kind) {
    case Kind::kConnected:
      spdlog::info("connected to the master{}; registering",
                   event.master_restarted ? " (master restarted)" : "");
      channel_->SendReliable(Registration());
      return;
    case Kind::kDisconnected:
      spdlog::warn("lost the master; reconnecting");
      return;
    case Kind::kGaveUp:
      return;
    case Kind::kMessage:
      break;
  }
  if (event.message.is(bus::AgentPing::kType)) {
    auto ping = event.message.Decode<bus::AgentPing>();
    if (ping.ok()) channel_->SendReliable(bus::AgentEcho{ping->nonce});
    return;
  }
  spdlog::debug("ignoring {} from the master", event.message.type);
}

}  // namespace det::agent

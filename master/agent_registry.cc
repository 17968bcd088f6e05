#include "master/agent_registry.h"

#include <spdlog/spdlog.h>

namespace det::master {

using ChannelEvent = bus::AgentChannelServer::Event;

AgentRegistry::AgentRegistry(zmq::context_t& context, const Clock& clock,
                             const MasterBusConfig& config)
    : clock_(clock),
      channel_(context, "master", clock, config.channel,
               bus::SocketLimits{.max_message_bytes = config.max_message_bytes}),
      queries_(context, "agent-registry", clock),
      publisher_(context, "master.agent-registry", clock) {
  queries_.Handle<bus::AgentListRequest, bus::AgentList>(
      [this](const bus::RpcContext&, const bus::AgentListRequest&) -> Result<bus::AgentList> {
        return List();
      });
}

AgentRegistry::~AgentRegistry() { Stop(); }

Result<std::string> AgentRegistry::Bind(const std::string& agent_endpoint,
                                        const bus::SocketSecurity& security,
                                        const std::string& event_publish_endpoint) {
  DET_ASSIGN_OR_RETURN(std::string bound, channel_.Bind(agent_endpoint, security));
  DET_RETURN_IF_ERROR(queries_.Bind(kQueryEndpoint, {}).status());
  DET_RETURN_IF_ERROR(publisher_.Connect(event_publish_endpoint, {}));
  return bound;
}

void AgentRegistry::Start() {
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
}

void AgentRegistry::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void AgentRegistry::Run() {
  std::vector<ChannelEvent> events;
  while (!stop_) {
    zmq::pollitem_t items[] = {{channel_.socket().handle(), 0, ZMQ_POLLIN, 0},
                               {queries_.socket().handle(), 0, ZMQ_POLLIN, 0},
                               {publisher_.socket().handle(), 0, ZMQ_POLLIN, 0}};
    bus::Poll(items, 3, std::chrono::milliseconds(100));
    events.clear();
    if (items[0].revents & ZMQ_POLLIN) channel_.Receive(&events);
    if (items[1].revents & ZMQ_POLLIN) queries_.Receive();
    publisher_.Pump();
    channel_.Tick(&events);
    for (auto& event : events) OnChannelEvent(event);
  }
}

void AgentRegistry::OnChannelEvent(ChannelEvent& event) {
  switch (event.kind) {
    case ChannelEvent::Kind::kConnected:
      spdlog::info("agent {} connected", event.agent_id);
      return;
    case ChannelEvent::Kind::kReconnected:
      spdlog::info("agent {} reconnected{}", event.agent_id,
                   event.agent_restarted ? " (agent restarted)" : "");
      SetState(event.agent_id, "connected");
      return;
    case ChannelEvent::Kind::kLost:
      spdlog::warn("agent {} lost: silent past the limit; keeping its place", event.agent_id);
      SetState(event.agent_id, "lost");
      return;
    case ChannelEvent::Kind::kExpired:
      spdlog::warn("agent {} gone: did not reconnect within the reconnect window", event.agent_id);
      if (auto it = agents_.find(event.agent_id); it != agents_.end()) {
        PublishState(event.agent_id, it->second, /*tombstone=*/true);
        agents_.erase(it);
      }
      return;
    case ChannelEvent::Kind::kMessage:
      break;
  }
  if (event.message.is(bus::AgentRegister::kType)) {
    auto info = event.message.Decode<bus::AgentRegister>();
    if (!info.ok()) {
      spdlog::warn("agent {}: bad registration: {}", event.agent_id, info.status().message());
      return;
    }
    OnRegister(event.agent_id, *info);
  }
}

void AgentRegistry::OnRegister(const std::string& agent_id, const bus::AgentRegister& info) {
  AgentEntry& entry = agents_[agent_id];
  entry.info = info;
  entry.state = "connected";
  spdlog::info("agent {} registered: {} slots in pool {}, version {}", agent_id, info.slots.size(),
               info.resource_pool, info.version);
  PublishState(agent_id, entry, /*tombstone=*/false);
}

void AgentRegistry::SetState(const std::string& agent_id, const std::string& state) {
  auto it = agents_.find(agent_id);
  if (it == agents_.end() || it->second.state == state) return;
  it->second.state = state;
  PublishState(agent_id, it->second, /*tombstone=*/false);
}

void AgentRegistry::PublishState(const std::string& agent_id, const AgentEntry& entry,
                                 bool tombstone) {
  bus::AgentStateEvent event{agent_id, tombstone ? "gone" : entry.state, entry.info.resource_pool,
                             static_cast<int32_t>(entry.info.slots.size())};
  Status published = publisher_.Publish(event, "agent/" + agent_id, tombstone);
  if (!published.ok()) spdlog::warn("agent registry: {}", published.message());
}

bus::AgentList AgentRegistry::List() const {
  bus::AgentList list;
  std::map<std::string, MonoTime> heard;
  for (const auto& s : channel_.Sessions()) heard[s.agent_id] = s.last_heard;
  for (const auto& [id, entry] : agents_) {
    bus::AgentSummary summary{id,
                              entry.state,
                              entry.info.resource_pool,
                              entry.info.hostname,
                              entry.info.version,
                              entry.info.slots};
    if (auto it = heard.find(id); it != heard.end()) {
      summary.last_heard_ms_ago =
          std::chrono::duration_cast<std::chrono::milliseconds>(clock_.Now() - it->second).count();
    }
    list.agents.push_back(std::move(summary));
  }
  return list;
}

}  // namespace det::master

#include "autoscaler/cluster_view.h"

#include <spdlog/spdlog.h>

namespace det::autoscaler {
namespace {

template <class M>
std::optional<M> DecodeOrWarn(const bus::BusEvent& event) {
  auto decoded = event.Decode<M>();
  if (!decoded.ok()) {
    spdlog::warn("autoscaler: {}", decoded.status().message());
    return std::nullopt;
  }
  return std::move(decoded).value();
}

}  // namespace

std::string ClusterView::Apply(const bus::EventSubscriber::Update& update) {
  if (update.kind == bus::EventSubscriber::Update::Kind::kReset) {
    agents_.clear();
    idle_since_.clear();
    pending_.clear();
    providers_.clear();
    instances_.clear();
    ++resets_;
    return "";
  }
  const bus::BusEvent& event = update.event;
  if (event.type == bus::AgentStateEvent::kType) ApplyAgent(event);
  if (event.type == bus::ClusterIdle::kType) ApplyIdle(event);
  if (event.type == bus::InstanceEvent::kType) ApplyInstance(event);
  if (event.type == bus::ClusterPending::kType) return ApplyPending(event);
  if (event.type == bus::PoolProviderEvent::kType) return ApplyProvider(event);
  return "";
}

void ClusterView::ApplyAgent(const bus::BusEvent& event) {
  auto state = DecodeOrWarn<bus::AgentStateEvent>(event);
  if (!state) return;
  if (event.header.tombstone) {
    agents_.erase(state->agent_id);
    spdlog::info("agent {} is gone", state->agent_id);
    return;
  }
  spdlog::info("agent {} is {} ({} slots, pool {})", state->agent_id, state->state, state->slots,
               state->resource_pool);
  agents_[state->agent_id] = *state;
}

void ClusterView::ApplyIdle(const bus::BusEvent& event) {
  auto idle = DecodeOrWarn<bus::ClusterIdle>(event);
  if (!idle) return;
  idle_since_.clear();
  for (const bus::IdleAgent& agent : idle->agents) idle_since_[agent.agent_id] = agent.idle_since;
}

std::string ClusterView::ApplyPending(const bus::BusEvent& event) {
  auto pending = DecodeOrWarn<bus::ClusterPending>(event);
  if (!pending) return "";
  pending_[pending->resource_pool] = *pending;
  return pending->resource_pool;
}

void ClusterView::ApplyInstance(const bus::BusEvent& event) {
  auto instance = DecodeOrWarn<bus::InstanceEvent>(event);
  if (!instance) return;
  if (event.header.tombstone) {
    instances_.erase(instance->instance.id);
  } else {
    instances_[instance->instance.id] = instance->instance;
  }
}

std::string ClusterView::ApplyProvider(const bus::BusEvent& event) {
  auto provider = DecodeOrWarn<bus::PoolProviderEvent>(event);
  if (!provider) return "";
  providers_[provider->resource_pool] = *provider;
  return provider->resource_pool;
}

}  // namespace det::autoscaler

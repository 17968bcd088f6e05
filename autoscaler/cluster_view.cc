#include "autoscaler/cluster_view.h"

#include <spdlog/spdlog.h>

namespace det::autoscaler {

void ClusterView::Apply(const bus::EventSubscriber::Update& update) {
  if (update.kind == bus::EventSubscriber::Update::Kind::kReset) {
    agents_.clear();
    ++resets_;
    return;
  }
  const bus::BusEvent& event = update.event;
  if (event.type != bus::AgentStateEvent::kType) return;
  auto state = event.Decode<bus::AgentStateEvent>();
  if (!state.ok()) {
    spdlog::warn("autoscaler: {}", state.status().message());
    return;
  }
  if (event.header.tombstone) {
    agents_.erase(state->agent_id);
    spdlog::info("agent {} is gone", state->agent_id);
    return;
  }
  spdlog::info("agent {} is {} ({} slots, pool {})", state->agent_id, state->state, state->slots,
               state->resource_pool);
  agents_[state->agent_id] = *state;
}

}  // namespace det::autoscaler

#pragma once

#include <map>
#include <string>

#include "bus/catalog/agent.h"
#include "bus/event_subscriber.h"

namespace det::autoscaler {

// The autoscaler's picture of the cluster, rebuilt from the master's event bus: a snapshot
// (kReset, then the retained events) followed by live events. Holds nothing the master cannot
// give back. Later issues add pending work per pool and the scale decider on top.
class ClusterView {
 public:
  // Applies one subscriber update. Events it does not know are ignored.
  void Apply(const bus::EventSubscriber::Update& update);

  const std::map<std::string, bus::AgentStateEvent>& agents() const { return agents_; }
  int resets() const { return resets_; }

 private:
  std::map<std::string, bus::AgentStateEvent> agents_;
  int resets_ = 0;
};

}  // namespace det::autoscaler

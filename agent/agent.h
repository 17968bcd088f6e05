#pragma once

#include <atomic>
#include <zmq.hpp>

#include "agent/agent_config.h"
#include "bus/agent_channel_client.h"
#include "bus/catalog/agent.h"

namespace det::agent {

// det-agent's main loop: joins the master over the agent channel, registers its slots after
// every welcome, answers the master's commands, and keeps going across master restarts.
//
// Run() returns 0 when `stop` is set, 3 when it gave up reconnecting.
class Agent {
 public:
  Agent(AgentConfig config, const Clock& clock);
  int Run(const std::atomic<bool>& stop);

 private:
  bus::AgentRegister Registration() const;
  void OnEvent(bus::AgentChannelClient::Event& event);

  AgentConfig config_;
  const Clock& clock_;
  zmq::context_t context_;
  std::unique_ptr<bus::AgentChannelClient> channel_;
};

}  // namespace det::agent

#pragma once

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <zmq.hpp>

#include "bus/agent_channel_server.h"
#include "bus/catalog/agent.h"
#include "bus/catalog/master.h"
#include "bus/event_publisher.h"
#include "bus/rpc_server.h"
#include "master/master_config.h"

namespace det::master {

// The agent registry: which agents exist, what they have, and whether they are reachable.
//
// Desired state: one entry per agent that registered, with its slots, in state connected or lost,
// and an `agent.state` event on the bus for every change (key "agent/<id>", so late subscribers
// get the current set from the snapshot). Actual state: the agent channel's sessions. It follows
// the channel: a register message records the agent, Lost marks it lost, Expired removes it (a
// tombstone event) once the reconnect window has passed.
//
// Threading: an actor. Start() runs it on its own thread; other components reach it only through
// its inproc request endpoint (kQueryEndpoint) with the same rpc messages the CLI uses.
class AgentRegistry {
 public:
  static constexpr const char* kQueryEndpoint = "inproc://master/agent-registry";

  AgentRegistry(zmq::context_t& context, const Clock& clock, const MasterBusConfig& config);
  ~AgentRegistry();

  // Binds the agent channel (TCP) and the query endpoint, connects the event publisher.
  Result<std::string> Bind(const std::string& agent_endpoint, const bus::SocketSecurity& security,
                           const std::string& event_publish_endpoint);
  void Start();
  void Stop();

 private:
  struct AgentEntry {
    bus::AgentRegister info;
    std::string state;  // "connected" | "lost"
  };

  void Run();
  void OnChannelEvent(bus::AgentChannelServer::Event& event);
  void OnRegister(const std::string& agent_id, const bus::AgentRegister& info);
  void SetState(const std::string& agent_id, const std::string& state);
  void PublishState(const std::string& agent_id, const AgentEntry& entry, bool tombstone);
  bus::AgentList List() const;

  const Clock& clock_;
  bus::AgentChannelServer channel_;
  bus::RpcServer queries_;
  bus::EventPublisher publisher_;
  std::map<std::string, AgentEntry> agents_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace det::master

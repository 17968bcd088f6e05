#pragma once

// Agent <-> master application messages on the agent channel, and the agent events the master
// publishes on the event bus.

#include <cstdint>
#include <string>
#include <vector>

#include "bus/catalog/workload.h"
#include "bus/codec.h"

namespace det::bus {

struct SlotInfo {
  std::string id;
  std::string type;  // "cpu" | "cuda"
  std::string brand;
  std::string uuid;        // GPUs: the device's UUID
  int64_t memory_mib = 0;  // GPUs: total memory
  bool operator==(const SlotInfo&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("id", s.id, kRequired);
    v("type", s.type, kRequired);
    v("brand", s.brand);
    v("uuid", s.uuid, kOmitDefault);
    v("memory_mib", s.memory_mib, kOmitDefault);
  }
};

// Agent -> master (reliable), after each welcome: who the agent is and what it has.
struct AgentRegister {
  static constexpr std::string_view kType = "agent.register";
  std::string version;
  std::string resource_pool;
  std::string hostname;
  std::vector<SlotInfo> slots;
  // Every workload the agent runs, and every one that ended whose end the master has not
  // confirmed recording (WorkloadEndRecorded), in its current state.
  std::vector<WorkloadState> workloads;
  bool operator==(const AgentRegister&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("version", s.version, kRequired);
    v("resource_pool", s.resource_pool);
    v("hostname", s.hostname);
    v("slots", s.slots);
    v("workloads", s.workloads);
  }
};

// Master -> agent (reliable): a test and diagnostics command the agent answers with AgentEcho.
struct AgentPing {
  static constexpr std::string_view kType = "agent.ping";
  std::string nonce;
  bool operator==(const AgentPing&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("nonce", s.nonce, kRequired);
  }
};

struct AgentEcho {
  static constexpr std::string_view kType = "agent.echo";
  std::string nonce;
  bool operator==(const AgentEcho&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("nonce", s.nonce, kRequired);
  }
};

// Agent -> master (best effort), every few seconds: how busy each slot is.
struct SlotUtilization {
  std::string slot_id;
  int32_t utilization_percent = 0;  // GPU: utilization.gpu; CPU: the host's busy share
  int64_t memory_used_mib = 0;      // GPU memory in use
  bool operator==(const SlotUtilization&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("slot_id", s.slot_id, kRequired);
    v("utilization_percent", s.utilization_percent);
    v("memory_used_mib", s.memory_used_mib);
  }
};

struct AgentUtilization {
  static constexpr std::string_view kType = "agent.utilization";
  int64_t sampled_at = 0;  // Unix nanoseconds
  std::vector<SlotUtilization> slots;
  bool operator==(const AgentUtilization&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("sampled_at", s.sampled_at);
    v("slots", s.slots);
  }
};

// Master -> agent (reliable): stop, and do not come back as you are (unknown resource pool, or
// devices or pool that changed while the master still held the agent's place).
struct AgentShutdown {
  static constexpr std::string_view kType = "agent.shutdown";
  std::string reason;
  bool operator==(const AgentShutdown&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("reason", s.reason, kRequired);
  }
};

// Agent -> master (reliable): this agent is stopping with no workload running; forget it now
// rather than after the reconnect window (an agent scaled down, or stopped by a person).
struct AgentLeaving {
  static constexpr std::string_view kType = "agent.leaving";
  std::string reason;
  bool operator==(const AgentLeaving&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("reason", s.reason);
  }
};

// Agent -> master (reliable): the machine this agent runs on is about to be taken away (an EC2
// spot interruption notice, a Compute Engine preemption). The master gives it no new work and
// has its trials checkpoint and queue again. Sent again after every welcome while it stands.
struct AgentInterruption {
  static constexpr std::string_view kType = "agent.interruption";
  std::string reason;    // what the cloud said ("EC2 spot interruption: terminate at ...")
  int64_t deadline = 0;  // Unix nanoseconds when the machine goes; 0: not said
  bool operator==(const AgentInterruption&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("reason", s.reason, kRequired);
    v("deadline", s.deadline);
  }
};

// Event bus (not retained): one of agent.connected, agent.lost, agent.enabled, agent.disabled.
template <const char* Type>
struct AgentNotice {
  static constexpr std::string_view kType = Type;
  std::string agent_id;
  std::string resource_pool;
  std::string reason;
  bool operator==(const AgentNotice&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("agent_id", s.agent_id, kRequired);
    v("resource_pool", s.resource_pool);
    v("reason", s.reason);
  }
};
inline constexpr char kAgentConnectedType[] = "agent.connected";
inline constexpr char kAgentLostType[] = "agent.lost";
inline constexpr char kAgentEnabledType[] = "agent.enabled";
inline constexpr char kAgentDisabledType[] = "agent.disabled";
using AgentConnected = AgentNotice<kAgentConnectedType>;
using AgentLost = AgentNotice<kAgentLostType>;
using AgentEnabled = AgentNotice<kAgentEnabledType>;
using AgentDisabled = AgentNotice<kAgentDisabledType>;

// Event bus, key "cluster/idle": the agents with no slot in use, and since when.
struct IdleAgent {
  std::string agent_id;
  std::string resource_pool;
  int64_t idle_since = 0;  // Unix nanoseconds
  bool operator==(const IdleAgent&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("agent_id", s.agent_id, kRequired);
    v("resource_pool", s.resource_pool);
    v("idle_since", s.idle_since);
  }
};

struct ClusterIdle {
  static constexpr std::string_view kType = "cluster.idle";
  std::vector<IdleAgent> agents;
  bool operator==(const ClusterIdle&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("agents", s.agents);
  }
};

// Event bus, key "agent/<id>": the agent's current state as the master sees it.
struct AgentStateEvent {
  static constexpr std::string_view kType = "agent.state";
  std::string agent_id;
  std::string state;  // "connected" | "lost" | "gone"
  std::string resource_pool;
  int32_t slots = 0;
  bool enabled = true;
  bool operator==(const AgentStateEvent&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("agent_id", s.agent_id, kRequired);
    v("state", s.state, kRequired);
    v("resource_pool", s.resource_pool);
    v("slots", s.slots);
    v("enabled", s.enabled);
  }
};

}  // namespace det::bus

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

// Event bus, key "agent/<id>": the agent's current state as the master sees it.
struct AgentStateEvent {
  static constexpr std::string_view kType = "agent.state";
  std::string agent_id;
  std::string state;  // "connected" | "lost" | "gone"
  std::string resource_pool;
  int32_t slots = 0;
  bool operator==(const AgentStateEvent&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("agent_id", s.agent_id, kRequired);
    v("state", s.state, kRequired);
    v("resource_pool", s.resource_pool);
    v("slots", s.slots);
  }
};

}  // namespace det::bus

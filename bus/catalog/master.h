#pragma once

// Gateway methods of the master's api service (params and reply bodies of rpc.request/rpc.reply).

#include <cstdint>
#include <string>
#include <vector>

#include "bus/catalog/agent.h"
#include "bus/codec.h"

namespace det::bus {

// Method "master.info".
struct MasterInfoRequest {
  static constexpr std::string_view kType = "master.info";
  bool operator==(const MasterInfoRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self&, V&) {}
};

// Method "master.logs" (admins): the master's recent log lines (it keeps the last 10,000 in
// memory), after `after_id`.
struct MasterLogsRequest {
  static constexpr std::string_view kType = "master.logs";
  int64_t after_id = 0;
  int32_t limit = 1000;  // 1..10000
  bool operator==(const MasterLogsRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("after_id", s.after_id);
    v("limit", s.limit);
  }
};

struct MasterLogLine {
  int64_t id = 0;
  int64_t timestamp = 0;  // Unix nanoseconds
  std::string level;
  std::string message;
  bool operator==(const MasterLogLine&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("id", s.id, kRequired);
    v("timestamp", s.timestamp);
    v("level", s.level);
    v("message", s.message);
  }
};

struct MasterLogsReply {
  static constexpr std::string_view kType = "master.logs.reply";
  std::vector<MasterLogLine> lines;
  bool operator==(const MasterLogsReply&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("lines", s.lines);
  }
};

struct MasterInfo {
  static constexpr std::string_view kType = "master.info.reply";
  std::string version;
  std::string cluster_id;  // chosen at the first start, kept in the database
  std::string master_id;   // new at every start
  int64_t started_at = 0;  // Unix nanoseconds
  std::string cluster_name;
  // The gateway's TCP port: how `det -m http(s)://host:port` (DET_MASTER inside a task) finds the
  // gateway from the REST URL (GET /api/v1/master).
  int32_t gateway_port = 0;
  // The gateway's CURVE public key ("" in plaintext): with the port, all a client needs to reach
  // it encrypted from the master's URL alone (its own key pair it makes itself).
  std::string gateway_public_key;
  bool operator==(const MasterInfo&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("version", s.version, kRequired);
    v("cluster_id", s.cluster_id);
    v("master_id", s.master_id);
    v("started_at", s.started_at);
    v("cluster_name", s.cluster_name);
    v("gateway_port", s.gateway_port);
    v("gateway_public_key", s.gateway_public_key);
  }
};

// Method "agent.list".
struct AgentListRequest {
  static constexpr std::string_view kType = "agent.list";
  bool operator==(const AgentListRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self&, V&) {}
};

struct AgentSummary {
  std::string id;
  std::string state;
  std::string resource_pool;
  std::string hostname;
  std::string version;
  std::vector<SlotInfo> slots;
  int64_t last_heard_ms_ago = 0;
  bool enabled = true;
  bool draining = false;  // disabled with drain; tasks still run
  std::vector<std::string> disabled_slots;
  int32_t used_slots = 0;
  std::vector<SlotUtilization> utilization;  // the latest sample the agent reported
  std::string interruption;                  // its machine is being taken away: what the cloud said
  std::map<std::string, std::string> slot_tasks;  // each used slot's task
  int64_t registered_at = 0;                      // Unix nanoseconds
  bool operator==(const AgentSummary&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("id", s.id, kRequired);
    v("state", s.state);
    v("resource_pool", s.resource_pool);
    v("hostname", s.hostname);
    v("version", s.version);
    v("slots", s.slots);
    v("last_heard_ms_ago", s.last_heard_ms_ago);
    v("enabled", s.enabled);
    v("draining", s.draining);
    v("disabled_slots", s.disabled_slots);
    v("used_slots", s.used_slots);
    v("utilization", s.utilization);
    v("interruption", s.interruption);
    v("slot_tasks", s.slot_tasks);
    v("registered_at", s.registered_at);
  }
};

// Method "agent.enable": enable or disable an agent; disabling without drain kills its tasks.
struct AgentEnableRequest {
  static constexpr std::string_view kType = "agent.enable";
  std::string agent_id;
  bool enabled = true;
  bool drain = false;
  bool operator==(const AgentEnableRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("agent_id", s.agent_id, kRequired);
    v("enabled", s.enabled);
    v("drain", s.drain);
  }
};

// Method "slot.enable": enable or disable one slot of an agent.
struct SlotEnableRequest {
  static constexpr std::string_view kType = "slot.enable";
  std::string agent_id;
  std::string slot_id;
  bool enabled = true;
  bool operator==(const SlotEnableRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("agent_id", s.agent_id, kRequired);
    v("slot_id", s.slot_id, kRequired);
    v("enabled", s.enabled);
  }
};

// The reply to agent.enable and slot.enable: the agent as it is now.
struct AgentReply {
  static constexpr std::string_view kType = "agent.reply";
  AgentSummary agent;
  bool operator==(const AgentReply&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("agent", s.agent, kRequired);
  }
};

struct AgentList {
  static constexpr std::string_view kType = "agent.list.reply";
  std::vector<AgentSummary> agents;
  bool operator==(const AgentList&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("agents", s.agents);
  }
};

// A resource pool: how it is configured and what its agents hold now.
struct ResourcePoolSummary {
  std::string name;
  std::string description;
  std::string scheduler;       // priority | fair_share
  std::string fitting_policy;  // best | worst
  bool preemption = false;
  int32_t default_priority = 42;
  std::string provider;  // aws | gcp | local; empty: a static pool
  int32_t min_instances = 0;
  int32_t max_instances = 0;
  int32_t slots_per_instance = 0;
  bool default_compute = false;  // where tasks with slots that name no pool go
  bool default_aux = false;      // where zero-slot tasks that name no pool go
  int32_t agents = 0;            // connected now
  int32_t slots = 0;
  int32_t used_slots = 0;
  bool operator==(const ResourcePoolSummary&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("name", s.name, kRequired);
    v("description", s.description);
    v("scheduler", s.scheduler);
    v("fitting_policy", s.fitting_policy);
    v("preemption", s.preemption);
    v("default_priority", s.default_priority);
    v("provider", s.provider);
    v("min_instances", s.min_instances);
    v("max_instances", s.max_instances);
    v("slots_per_instance", s.slots_per_instance);
    v("default_compute", s.default_compute);
    v("default_aux", s.default_aux);
    v("agents", s.agents);
    v("slots", s.slots);
    v("used_slots", s.used_slots);
  }
};

// Method "resource_pool.list".
struct ResourcePoolListRequest {
  static constexpr std::string_view kType = "resource_pool.list";
  bool operator==(const ResourcePoolListRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self&, V&) {}
};

struct ResourcePoolList {
  static constexpr std::string_view kType = "resource_pool.list.reply";
  std::vector<ResourcePoolSummary> pools;
  bool operator==(const ResourcePoolList&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("pools", s.pools);
  }
};

// Method "registry.stats" (inproc, for /metrics): the agent registry's counters.
struct RegistryStatsRequest {
  static constexpr std::string_view kType = "registry.stats";
  bool operator==(const RegistryStatsRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self&, V&) {}
};

struct RegistryStats {
  static constexpr std::string_view kType = "registry.stats.reply";
  int64_t scheduling_passes = 0;  // passes that looked at a pool with waiting work
  int64_t scheduling_ns_total = 0;
  int64_t last_pass_ns = 0;
  int64_t agent_messages = 0;  // well-formed messages from agents
  int64_t agent_drops = 0;     // malformed ones, dropped
  bool operator==(const RegistryStats&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("scheduling_passes", s.scheduling_passes);
    v("scheduling_ns_total", s.scheduling_ns_total);
    v("last_pass_ns", s.last_pass_ns);
    v("agent_messages", s.agent_messages);
    v("agent_drops", s.agent_drops);
  }
};

}  // namespace det::bus

#pragma once

// The event-bus messages between the master and the autoscaler: each pool's provider section
// (master -> autoscaler, retained), and the autoscaler's instances and decisions (autoscaler ->
// master, which stores them).

#include <cstdint>
#include <string>
#include <vector>

#include "bus/codec.h"

namespace det::bus {

// Event bus, key "pool/<name>": a pool with a `provider:` section, as master.yaml has it, and how
// the agents it launches reach the master.
struct PoolProviderEvent {
  static constexpr std::string_view kType = "pool.provider";
  std::string resource_pool;
  std::string provider_yaml;  // the `provider:` mapping, as YAML
  std::string cluster_id;     // instances are tagged with it
  std::string agent_host;     // the master's agent channel, as agents on this network reach it
  int32_t agent_port = 0;
  bool operator==(const PoolProviderEvent&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("resource_pool", s.resource_pool, kRequired);
    v("provider_yaml", s.provider_yaml, kRequired);
    v("cluster_id", s.cluster_id);
    v("agent_host", s.agent_host);
    v("agent_port", s.agent_port);
  }
};

// An instance the autoscaler manages, as it last saw it.
struct InstanceInfo {
  std::string id;
  std::string resource_pool;
  std::string provider;  // aws | gcp | local
  std::string instance_type;
  std::string zone;
  bool spot = false;
  std::string state;        // spot_requested | starting | running | stopping | stopped | terminated
  std::string agent;        // connected | idle | lost | "" (no agent)
  int64_t launched_at = 0;  // Unix nanoseconds
  int64_t terminated_at = 0;  // 0: live (set by the master when it records the end)
  bool operator==(const InstanceInfo&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("id", s.id, kRequired);
    v("resource_pool", s.resource_pool);
    v("provider", s.provider);
    v("instance_type", s.instance_type);
    v("zone", s.zone);
    v("spot", s.spot);
    v("state", s.state);
    v("agent", s.agent);
    v("launched_at", s.launched_at);
    v("terminated_at", s.terminated_at, kOmitDefault);
  }
};

// Event bus, key "instance/<id>" (a tombstone once terminated).
struct InstanceEvent {
  static constexpr std::string_view kType = "instance.state";
  InstanceInfo instance;
  bool operator==(const InstanceEvent&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("instance", s.instance, kRequired);
  }
};

struct TerminatedInstance {
  std::string id;
  std::string reason;
  bool operator==(const TerminatedInstance&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("id", s.id, kRequired);
    v("reason", s.reason);
  }
};

// Event bus (not retained): one scaling decision the autoscaler carried out, with its reasons.
struct ScalingDecisionEvent {
  static constexpr std::string_view kType = "instance.decision";
  std::string resource_pool;
  int64_t decided_at = 0;             // Unix nanoseconds
  int32_t launch = 0;                 // instances asked for
  std::vector<std::string> launched;  // ids the provider returned
  std::string launch_reason;
  std::vector<TerminatedInstance> terminated;
  std::string error;  // what went wrong, if anything (launch refused, provider error, breaker)
  bool operator==(const ScalingDecisionEvent&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("resource_pool", s.resource_pool, kRequired);
    v("decided_at", s.decided_at);
    v("launch", s.launch);
    v("launched", s.launched);
    v("launch_reason", s.launch_reason);
    v("terminated", s.terminated);
    v("error", s.error);
  }
};

// Method "autoscaler.instances": the instances the autoscaler reported (stored by the master).
struct InstanceListRequest {
  static constexpr std::string_view kType = "autoscaler.instances";
  std::string resource_pool;  // "": every pool
  bool all = false;           // also terminated ones
  bool operator==(const InstanceListRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("resource_pool", s.resource_pool);
    v("all", s.all);
  }
};

struct InstanceList {
  static constexpr std::string_view kType = "autoscaler.instances.reply";
  std::vector<InstanceInfo> instances;  // oldest first
  bool operator==(const InstanceList&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("instances", s.instances);
  }
};

// Method "autoscaler.decisions": the latest scaling decisions, newest first.
struct ScalingDecisionListRequest {
  static constexpr std::string_view kType = "autoscaler.decisions";
  std::string resource_pool;  // "": every pool
  int32_t limit = 20;         // 1..1000
  bool operator==(const ScalingDecisionListRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("resource_pool", s.resource_pool);
    v("limit", s.limit);
  }
};

struct ScalingDecisionList {
  static constexpr std::string_view kType = "autoscaler.decisions.reply";
  std::vector<ScalingDecisionEvent> decisions;
  bool operator==(const ScalingDecisionList&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("decisions", s.decisions);
  }
};

}  // namespace det::bus

#pragma once

// A resource pool's `provider:` section of master.yaml, with Determined's names. The master reads
// it (to refuse work that could never fit, and to count demand) and publishes the section as
// written; the autoscaler reads the same text with the same parser, so the two never disagree.
// Keys of one provider type only (aws: `region`, `instance_type`, ...; gcp; local: `agent_args`)
// are parsed by that provider: each reader of the section passes the types it knows
// (SectionType), so this folder names no cloud.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/config.h"

namespace det::provider {

struct ProviderConfig {
  std::string type;  // `type`: aws | gcp | local (required)
  int min_instances = 0;
  int max_instances = 5;
  // `instance_slots`: slots of one instance. gcp: the instance type's GPUs when not given;
  // aws: by `instance_type` (g4dn.metal: 8); local: 0 unless given.
  int32_t slots_per_instance = 0;
  Duration max_idle_agent_period = std::chrono::minutes(5);
  Duration max_agent_starting_period = std::chrono::minutes(10);
  // Determined hard-codes 10 minutes: an instance whose agent left is terminated after this.
  Duration max_disconnected_period = std::chrono::minutes(10);
  // After more than `launch_error_retries` launch calls in a row failed, the pool stops launching
  // for `launch_error_timeout` (0: only per-offering backoff applies).
  Duration launch_error_timeout = Duration::zero();
  int launch_error_retries = 0;
  // Beyond Determined: pending events within this window are decided together, and at most
  // `max_launches_per_minute` instances are asked for per minute.
  Duration launch_batch_window = std::chrono::milliseconds(20);
  int max_launches_per_minute = 100;
  // `spot_fallback: on_demand`: when spot capacity or quota fails, launch on-demand meanwhile.
  std::string spot_fallback = "none";
  // Launching stops when this many launched instances in a row never connected (0: never).
  int circuit_breaker_threshold = 3;
  std::string startup_script;
  std::string master_url;  // how new agents reach the master; empty: the autoscaler's master
  YAML::Node raw;          // the section as written, for the provider's own keys
};

// What one provider type adds to the section. Both may record errors on the reader.
struct SectionType {
  std::string name;  // `type`
  // The slots of one instance when `instance_slots` is not given (aws: by `instance_type`).
  std::function<int32_t(ConfigReader&)> default_slots;
  // Reads the type's own keys to check them, so that a bad section stops det-master at start
  // instead of only the autoscaler's pool. Empty: checked only by the provider (local).
  std::function<void(ConfigReader&)> check_own_keys;
};

// `type: local`: det-agent processes on this host; 0 slots unless given; its keys
// (`agent_binary`, `agent_args`, `work_dir`) are read by the local provider.
SectionType LocalSection();

// Reads the section at `reader` (a child reader such as `resource_pools[0].provider`), recording
// errors on it, those of the provider type's own keys included. `type` must name one of `types`
// (the section readers the caller is built with: cloud_aws's AwsSection(), cloud_gcp's
// GcpSection(), LocalSection()).
ProviderConfig ReadProviderConfig(ConfigReader& reader, const std::vector<SectionType>& types);

}  // namespace det::provider

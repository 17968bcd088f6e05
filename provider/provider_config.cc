#include "provider/provider_config.h"

#include "common/strings.h"

namespace det::provider {
namespace {

constexpr const char* kSpotFallbacks[] = {"none", "on_demand"};

void ReadPeriods(ConfigReader& reader, ProviderConfig* config) {
  reader.Read("max_idle_agent_period", &config->max_idle_agent_period);
  reader.Read("max_agent_starting_period", &config->max_agent_starting_period);
  reader.Read("max_disconnected_period", &config->max_disconnected_period);
  reader.Read("launch_error_timeout", &config->launch_error_timeout);
  reader.Read("launch_batch_window", &config->launch_batch_window);
  for (auto [key, value] : {std::pair{"max_idle_agent_period", config->max_idle_agent_period},
                            {"max_agent_starting_period", config->max_agent_starting_period},
                            {"max_disconnected_period", config->max_disconnected_period},
                            {"launch_error_timeout", config->launch_error_timeout},
                            {"launch_batch_window", config->launch_batch_window}}) {
    if (value < Duration::zero()) reader.Fail(key, "must not be negative");
  }
}

}  // namespace

SectionType LocalSection() {
  return {"local", [](ConfigReader&) { return 0; }, nullptr};
}

ProviderConfig ReadProviderConfig(ConfigReader& reader, const std::vector<SectionType>& types) {
  ProviderConfig config;
  reader.AllowOtherKeys();
  config.raw = reader.node();
  std::vector<std::string> names;
  std::vector<const char*> allowed;
  for (const SectionType& type : types) {
    names.push_back(type.name);
    allowed.push_back(type.name.c_str());
  }
  reader.ReadOneOf("type", &config.type, allowed);
  if (config.type.empty()) reader.Fail("type", "is required (one of " + Join(names, ", ") + ")");
  const SectionType* type = nullptr;
  for (const SectionType& candidate : types) {
    if (candidate.name == config.type) type = &candidate;
  }
  reader.ReadInt("max_instances", &config.max_instances, 1, 100000);
  reader.ReadInt("min_instances", &config.min_instances, 0, 100000);
  if (config.min_instances > config.max_instances) {
    reader.Fail("min_instances",
                "must not exceed max_instances (" + std::to_string(config.max_instances) + ")");
  }
  int slots = -1;
  reader.ReadInt("instance_slots", &slots, 0, 4096);
  if (slots >= 0) {
    config.slots_per_instance = slots;
  } else if (type && type->default_slots) {
    config.slots_per_instance = type->default_slots(reader);
  }
  ReadPeriods(reader, &config);
  reader.ReadInt("launch_error_retries", &config.launch_error_retries, 0, 1000);
  reader.ReadInt("max_launches_per_minute", &config.max_launches_per_minute, 1, 100000);
  reader.ReadOneOf("spot_fallback", &config.spot_fallback, kSpotFallbacks);
  reader.ReadInt("circuit_breaker_threshold", &config.circuit_breaker_threshold, 0, 100000);
  reader.Read("startup_script", &config.startup_script);
  reader.Read("master_url", &config.master_url);
  if (type && type->check_own_keys) type->check_own_keys(reader);
  return config;
}

}  // namespace det::provider

// libFuzzer target for the YAML the components read: master.yaml (with its resource pools and
// their providers, which the autoscaler reads again from what the master publishes), an
// experiment's config (and the redacted copy readers see), agent.yaml and autoscaler.yaml.
//
// Input: the first byte picks the document (its value modulo 4: master, experiment, agent,
// autoscaler); the rest is the YAML text. Bad documents must come back as errors: a crash, a
// sanitizer report or an exception that escapes is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "agent/agent_config.h"
#include "autoscaler/autoscaler.h"
#include "autoscaler/autoscaler_config.h"
#include "common/config.h"
#include "master/experiments/experiment/experiment_config.h"
#include "master/master_config.h"
#include "provider/provider_config.h"

namespace {

// What master.cc publishes for each pool with a provider and autoscaler.cc reads back: a section
// the master accepted must be one the autoscaler accepts.
void CheckProvidersRoundTrip(const det::master::MasterConfig& config) {
  for (const det::master::ResourcePoolConfig& pool : config.resources.resource_pools) {
    if (!pool.provider) continue;
    YAML::Emitter yaml;
    yaml << pool.provider->raw;
    auto node = det::ParseYaml(yaml.c_str(), "pool " + pool.pool_name);
    if (!node.ok()) {
      std::fprintf(stderr, "the published provider section does not parse: %s\n%s\n",
                   node.status().message().c_str(), yaml.c_str());
      std::abort();
    }
    det::ConfigReader reader(*node, "resource_pools[" + pool.pool_name + "].provider");
    det::provider::ReadProviderConfig(
        reader, det::autoscaler::BuiltInProviders(det::RealClock::Instance()).sections);
    if (det::Status read = reader.Finish(); !read.ok()) {
      std::fprintf(stderr, "the autoscaler refuses what the master accepted: %s\n%s\n",
                   read.message().c_str(), yaml.c_str());
      std::abort();
    }
  }
}

void ParseAs(uint8_t which, const std::string& text) {
  auto doc = det::ParseYaml(text, "fuzz.yaml");
  switch (which % 4) {
    case 0:
      if (doc.ok()) {
        auto config = det::master::ParseMasterConfig(*doc);
        if (config.ok()) CheckProvidersRoundTrip(*config);
      }
      break;
    case 1:
      // Stored configs are those the parser accepted; readers see them redacted.
      if (doc.ok() && det::master::experiment::ParseExperimentConfig(*doc).ok()) {
        (void)det::master::experiment::RedactedConfig(text);
      }
      break;
    case 2:
      if (doc.ok()) (void)det::agent::ParseAgentConfigWithEnvironment(*doc);
      break;
    default:
      if (doc.ok()) (void)det::autoscaler::ParseAutoscalerConfig(*doc);
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  ParseAs(data[0], std::string(reinterpret_cast<const char*>(data) + 1, size - 1));
  return 0;
}

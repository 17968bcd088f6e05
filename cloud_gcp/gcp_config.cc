#include "cloud_gcp/gcp_config.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <regex>

#include "common/http_client.h"
#include "common/strings.h"

namespace det::gcp {
namespace {

constexpr const char* kCloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform";
constexpr size_t kMaxNamePrefix = 55;  // + the 8-character random suffix: 63, GCE's limit
constexpr const char* kGpuTypes =
    "nvidia-tesla-t4, nvidia-tesla-p4, nvidia-tesla-p100, "
    "nvidia-tesla-v100, nvidia-tesla-k80";

// GPUs N1 machines can attach, and the counts Compute Engine allows of each.
const std::map<std::string, std::vector<int>>& AttachableGpus() {
  static const std::map<std::string, std::vector<int>> kGpus = {
      {"nvidia-tesla-t4", {1, 2, 4}},     {"nvidia-tesla-p4", {1, 2, 4}},
      {"nvidia-tesla-p100", {1, 2, 4}},   {"nvidia-tesla-v100", {1, 2, 4, 8}},
      {"nvidia-tesla-k80", {1, 2, 4, 8}},
  };
  return kGpus;
}

struct FixedGpus {
  std::string type;
  int count = 0;
};

// "8" of "8g" (A-series sizes are GPU counts); nullopt when `text` is not that.
std::optional<int> GpuCountOfSize(std::string_view text) {
  int count = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), count);
  if (error != std::errc() || std::string_view(end) != "g" || count <= 0) return std::nullopt;
  return count;
}

// The GPUs that come with A2, A3, A4 and G2 machine types; nullopt for types not in the table.
std::optional<FixedGpus> MachineGpus(const std::string& machine_type) {
  static const std::map<std::string, std::string> kAcceleratorOptimized = {
      {"a2-highgpu", "nvidia-tesla-a100"},  {"a2-megagpu", "nvidia-tesla-a100"},
      {"a2-ultragpu", "nvidia-a100-80gb"},  {"a3-highgpu", "nvidia-h100-80gb"},
      {"a3-edgegpu", "nvidia-h100-80gb"},   {"a3-megagpu", "nvidia-h100-mega-80gb"},
      {"a3-ultragpu", "nvidia-h200-141gb"}, {"a4-highgpu", "nvidia-b200"}};
  static const std::map<std::string, int> kG2 = {
      {"g2-standard-4", 1},  {"g2-standard-8", 1},  {"g2-standard-12", 1}, {"g2-standard-16", 1},
      {"g2-standard-24", 2}, {"g2-standard-32", 1}, {"g2-standard-48", 4}, {"g2-standard-96", 8}};
  if (auto g2 = kG2.find(machine_type); g2 != kG2.end()) return FixedGpus{"nvidia-l4", g2->second};
  const size_t last_dash = machine_type.rfind('-');
  if (last_dash == std::string::npos) return std::nullopt;
  auto family = kAcceleratorOptimized.find(machine_type.substr(0, last_dash));
  std::optional<int> count = GpuCountOfSize(std::string_view(machine_type).substr(last_dash + 1));
  if (family == kAcceleratorOptimized.end() || !count) return std::nullopt;
  return FixedGpus{family->second, *count};
}

bool IsN1(const std::string& machine_type) {
  return machine_type.starts_with("n1-") || machine_type.starts_with("custom-");
}

// A2, A3, A4, G2, G4, ...: machine families that come with their GPUs.
bool IsAcceleratorFamily(const std::string& machine_type) {
  static const std::regex kFamily(R"([ag][0-9]+[a-z]?-.*)");
  return std::regex_match(machine_type, kFamily);
}

// The shape of a machine type (n2-standard-8, e2-micro, n2-custom-8-16384-ext,
// c3-highcpu-192-metal, ...); Compute Engine itself refuses types that do not exist.
bool IsMachineType(const std::string& text) {
  static const std::regex kShape(R"([a-z][a-z0-9]*(-[a-z0-9]+)+)");
  return text.size() <= 63 && std::regex_match(text, kShape);
}

bool IsLabelKey(const std::string& text) {
  static const std::regex kKey(R"([a-z][a-z0-9_-]{0,62})");
  return std::regex_match(text, kKey);
}

bool IsLabelValue(const std::string& text) {
  static const std::regex kValue(R"([a-z0-9_-]{0,63})");
  return std::regex_match(text, kValue);
}

// A name prefix an instance name can start with: [a-z]([-a-z0-9]*)?, at most kMaxNamePrefix.
bool IsNamePrefix(const std::string& text) {
  static const std::regex kPrefix(R"([a-z][-a-z0-9]*)");
  return text.size() <= kMaxNamePrefix && std::regex_match(text, kPrefix);
}

struct InstanceType {
  std::string machine_type = "n1-standard-32";
  std::string gpu_type = "nvidia-tesla-t4";
  int gpu_num = 4;
  bool preemptible = false;
};

// Checks gpu_type and gpu_num against a machine type that comes with its GPUs (or, for an
// accelerator family not in the table, takes them as said).
void CheckBuiltInGpus(ConfigReader& child, const InstanceType& type, bool gpus_given) {
  std::optional<FixedGpus> fixed = MachineGpus(type.machine_type);
  if (!fixed) {
    if (!gpus_given) {
      child.Fail("gpu_num", "is required for " + type.machine_type +
                                " (with gpu_type): its GPUs are not in this version's table");
    }
    return;
  }
  if (type.gpu_type != fixed->type || type.gpu_num != fixed->count) {
    child.Fail(type.gpu_type != fixed->type ? "gpu_type" : "gpu_num",
               type.machine_type + " comes with " + std::to_string(fixed->count) + " " +
                   fixed->type + " (leave gpu_type and gpu_num out, or say exactly that)");
  }
}

// Checks GPUs attached to an N1 machine against what Compute Engine allows.
void CheckAttachedGpus(ConfigReader& child, const InstanceType& type) {
  auto allowed = AttachableGpus().find(type.gpu_type);
  if (allowed == AttachableGpus().end()) {
    child.Fail("gpu_type", "\"" + type.gpu_type +
                               "\" is not a GPU an N1 machine attaches; one of " + kGpuTypes);
  } else if (std::find(allowed->second.begin(), allowed->second.end(), type.gpu_num) ==
             allowed->second.end()) {
    std::vector<std::string> counts;
    for (int n : allowed->second) counts.push_back(std::to_string(n));
    child.Fail("gpu_num", std::to_string(type.gpu_num) + " " + type.gpu_type +
                              " cannot be attached; allowed: " + Join(counts, ", "));
  }
}

// Reads instance_type with the GPU defaults described in the header, validating the machine
// type and the GPUs against each other (errors on `reader`'s instance_type child).
InstanceType ReadInstanceType(ConfigReader& reader) {
  InstanceType type;
  ConfigReader& child = reader.Child("instance_type");
  child.Read("machine_type", &type.machine_type);
  const bool gpus_given = child.Has("gpu_type") || child.Has("gpu_num");
  if (!gpus_given && !IsN1(type.machine_type)) {
    std::optional<FixedGpus> fixed = MachineGpus(type.machine_type);
    type.gpu_type = fixed ? fixed->type : "";
    type.gpu_num = fixed ? fixed->count : 0;
  }
  child.Read("gpu_type", &type.gpu_type);
  child.ReadInt("gpu_num", &type.gpu_num, 0, 16);
  child.Read("preemptible", &type.preemptible);
  if (!IsMachineType(type.machine_type)) {
    child.Fail("machine_type", "\"" + type.machine_type +
                                   "\" is not a Compute Engine machine type (e.g. n1-standard-8, "
                                   "a2-highgpu-1g, g2-standard-8, e2-standard-4, custom-8-30720)");
  } else if (IsAcceleratorFamily(type.machine_type)) {
    CheckBuiltInGpus(child, type, gpus_given);
  } else if (type.gpu_num > 0 && !IsN1(type.machine_type)) {
    child.Fail("gpu_num",
               "GPUs attach only to N1 machine types (A2, A3, A4 and G2 come with "
               "theirs); " +
                   type.machine_type + " takes gpu_num: 0");
  } else if (type.gpu_num > 0) {
    CheckAttachedGpus(child, type);
  }
  if (type.gpu_num == 0) type.gpu_type.clear();
  return type;
}

void ReadLabels(ConfigReader& reader, GcpProviderConfig* config) {
  const YAML::Node labels = reader.Raw("labels");
  if (!labels) return;
  if (!labels.IsMap()) {
    reader.Fail("labels", "expected a mapping of label keys to values");
    return;
  }
  for (const auto& entry : labels) {
    const std::string key = entry.first.as<std::string>("");
    const std::string value = entry.second.IsScalar() ? entry.second.as<std::string>("") : "\x01";
    if (!IsLabelKey(key)) {
      reader.Fail("labels", "\"" + key + "\" is not a label key (lowercase letters, digits, '_' " +
                                "and '-', starting with a letter, at most 63)");
    } else if (!IsLabelValue(value)) {
      reader.Fail("labels." + key,
                  "is not a label value (lowercase letters, digits, '_' and "
                  "'-', at most 63)");
    } else if (key == config->label_key || key == "determined-resource-pool") {
      reader.Fail("labels." + key, "is set by the provider itself (label_key, the pool label)");
    }
    config->labels[key] = value;
  }
}

void ReadNetwork(ConfigReader& reader, GcpProviderConfig* config) {
  ConfigReader& nic = reader.Child("network_interface");
  nic.Read("network", &config->network);
  nic.Read("subnetwork", &config->subnetwork);
  nic.Read("external_ip", &config->external_ip);
  reader.Read("network_tags", &config->network_tags);
  ConfigReader& account = reader.Child("service_account");
  account.Read("email", &config->service_account_email);
  account.Read("scopes", &config->service_account_scopes);
  if (!config->service_account_email.empty() && config->service_account_scopes.empty()) {
    config->service_account_scopes = {kCloudPlatformScope};
  }
}

void Validate(ConfigReader& reader, const GcpProviderConfig& config) {
  if (config.boot_disk_source_image.empty()) {
    reader.Fail("boot_disk_source_image",
                "is required (the agent image, e.g. projects/<project>/global/images/<image>)");
  }
  if (!IsLabelKey(config.label_key)) {
    reader.Fail("label_key", "\"" + config.label_key + "\" is not a label key");
  } else if (config.label_key == "determined-resource-pool") {
    reader.Fail("label_key", "\"determined-resource-pool\" is the pool's own label");
  }
  static const std::regex kNetworkTag(R"([a-z]([-a-z0-9]{0,61}[a-z0-9])?)");
  for (const std::string& tag : config.network_tags) {
    if (!std::regex_match(tag, kNetworkTag)) {
      reader.Fail("network_tags", "\"" + tag +
                                      "\" is not a network tag (lowercase letters, digits and "
                                      "'-', starting with a letter, at most 63)");
    }
  }
  if (config.label_value.empty() || !IsLabelValue(config.label_value)) {
    reader.Fail("label_value", "\"" + config.label_value +
                                   "\" is not a label value (lowercase letters, digits, '_' and "
                                   "'-', at most 63)");
  }
  if (!IsNamePrefix(config.name_prefix)) {
    reader.Fail("name_prefix", "\"" + config.name_prefix +
                                   "\" cannot start an instance name: a lowercase letter, then "
                                   "lowercase letters, digits and '-', at most 55 characters");
  }
  if (config.spot && config.preemptible) {
    reader.Fail("spot", "and instance_type.preemptible are two kinds of preemptible VM: pick one");
  }
  if (config.operation_timeout_period <= Duration::zero()) {
    reader.Fail("operation_timeout_period", "must be positive");
  }
  if (!config.endpoint_url.empty() && !ParseUrl(config.endpoint_url).ok()) {
    reader.Fail("endpoint_url", ParseUrl(config.endpoint_url).status().message());
  }
}

}  // namespace

std::string GcpProviderConfig::Network() const {
  return network.empty() ? "projects/" + project + "/global/networks/default" : network;
}

std::string GcpProviderConfig::Subnetwork() const {
  if (!subnetwork.empty() || !network.empty()) return subnetwork;  // "": the network's own choice
  return "projects/" + project + "/regions/" + RegionOfZone(zone) + "/subnetworks/default";
}

std::string RegionOfZone(const std::string& zone) {
  const size_t dash = zone.rfind('-');
  return dash == std::string::npos ? zone : zone.substr(0, dash);
}

std::string LabelValue(const std::string& text) {
  if (IsLabelValue(text)) return text;
  std::string value;
  for (char c : text) {
    const char lower = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    value += (std::isalnum(static_cast<unsigned char>(lower)) || lower == '_' || lower == '-')
                 ? lower
                 : '-';
  }
  // FNV-1a (32 bits): the same on every build, since the value is how instances are found.
  uint32_t fnv = 2166136261u;
  for (unsigned char c : text) fnv = (fnv ^ c) * 16777619u;
  char hash[9];
  std::snprintf(hash, sizeof(hash), "%08x", fnv);
  return value.substr(0, 63 - 9) + "-" + hash;
}

GcpProviderConfig ReadGcpProviderConfig(ConfigReader& reader, const std::string& cluster_id) {
  GcpProviderConfig config;
  config.label_value = LabelValue(cluster_id.empty() ? "determined-ai-determined" : cluster_id);
  reader.Read("project", &config.project);
  reader.Read("zone", &config.zone);
  reader.ReadInt("boot_disk_size", &config.boot_disk_size, 100, 65536);
  reader.Read("boot_disk_source_image", &config.boot_disk_source_image);
  reader.Read("boot_disk_type", &config.boot_disk_type);
  // Determined takes the last part, so a full ".../diskTypes/pd-ssd" works as well.
  config.boot_disk_type = config.boot_disk_type.substr(config.boot_disk_type.rfind('/') + 1);
  reader.Read("label_key", &config.label_key);
  reader.Read("label_value", &config.label_value);
  reader.Read("name_prefix", &config.name_prefix);
  ReadLabels(reader, &config);
  ReadNetwork(reader, &config);
  const InstanceType type = ReadInstanceType(reader);
  config.machine_type = type.machine_type;
  config.gpu_type = type.gpu_type;
  config.gpu_num = type.gpu_num;
  config.preemptible = type.preemptible;
  reader.Read("spot", &config.spot);
  reader.Read("cpu_slots_allowed", &config.cpu_slots_allowed);
  reader.Read("operation_timeout_period", &config.operation_timeout_period);
  reader.Read("spot_fallback", &config.spot_fallback);
  reader.Read("endpoint_url", &config.endpoint_url);
  provider::ReadAgentStartConfig(reader, &config.agent_start);
  Validate(reader, config);
  return config;
}

Result<GcpProviderConfig> ReadGcpProviderConfig(const YAML::Node& provider,
                                                const std::string& cluster_id) {
  ConfigReader reader(provider, "provider");
  reader.AllowOtherKeys();
  GcpProviderConfig config = ReadGcpProviderConfig(reader, cluster_id);
  DET_RETURN_IF_ERROR(reader.Finish());
  return config;
}

int32_t GcpInstanceSlots(const YAML::Node& provider) {
  ConfigReader reader(provider, "provider");
  reader.AllowOtherKeys();
  const InstanceType type = ReadInstanceType(reader);
  bool cpu_slots_allowed = false;
  reader.Read("cpu_slots_allowed", &cpu_slots_allowed);
  if (type.gpu_num == 0 && cpu_slots_allowed) return 1;
  return type.gpu_num;
}

provider::SectionType GcpSection() {
  return {"gcp", [](ConfigReader& reader) { return GcpInstanceSlots(reader.node()); },
          [](ConfigReader& reader) { ReadGcpProviderConfig(reader, ""); }};
}

}  // namespace det::gcp

#include "master/experiments/experiment/experiment_config.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "common/config.h"
#include "common/environment.h"
#include "common/yaml_json.h"

namespace det::master::experiment {
namespace {

constexpr const char* kStorageTypes[] = {"shared_fs", "s3", "gcs"};
// Determined's other kinds, named in the error until they are implemented here.
constexpr const char* kPlannedStorageTypes[] = {"azure", "directory"};

void ReadEntrypoint(ConfigReader& reader, std::vector<std::string>* entrypoint) {
  const nlohmann::json value = YamlToJson(reader.Raw("entrypoint"));
  if (value.is_string() && !value.get<std::string>().empty()) {
    *entrypoint = {value.get<std::string>()};
  } else if (value.is_array() && !value.empty() &&
             std::all_of(value.begin(), value.end(), [](const auto& a) { return a.is_string(); })) {
    *entrypoint = value.get<std::vector<std::string>>();
  } else {
    reader.Fail("entrypoint", "is required: a command line, or a list of arguments");
  }
}

void ReadResources(ConfigReader& reader, TrialResources* resources) {
  reader.ReadInt("slots_per_trial", &resources->slots_per_trial, 0, 1 << 20);
  if (reader.Has("max_slots")) {
    int max_slots = 0;
    reader.ReadInt("max_slots", &max_slots, 1, 1 << 20);
    resources->max_slots = max_slots;
  }
  reader.Read("weight", &resources->weight);
  if (!(resources->weight > 0)) reader.Fail("weight", "must be more than 0");
  if (reader.Has("priority")) {
    int priority = 0;
    reader.ReadInt("priority", &priority, 1, 99);
    resources->priority = priority;
  }
  reader.Read("resource_pool", &resources->resource_pool);
  reader.Read("is_single_node", &resources->is_single_node);
  reader.Ignore({"native_parallel", "devices", "agent_label"}, "");
  if (reader.Has("slots"))
    reader.Fail("slots", "is a command's field; experiments use slots_per_trial");
  std::string shm_size;
  reader.Read("shm_size", &shm_size);
  if (!shm_size.empty()) {
    Result<int64_t> bytes = ParseByteSize(shm_size);
    if (bytes.ok()) {
      resources->shm_size = *bytes;
    } else {
      reader.Fail("shm_size", bytes.status().message());
    }
  }
}

}  // namespace

namespace {

void ReadSharedFs(ConfigReader& reader, CheckpointStorage* storage) {
  reader.Read("host_path", &storage->host_path);
  if (storage->host_path.empty() || storage->host_path.front() != '/') {
    reader.Fail("host_path", "is required: an absolute folder every agent sees at the same place");
  }
  reader.Read("storage_path", &storage->storage_path);
  reader.Ignore({"propagation", "container_path", "checkpoint_path", "tensorboard_path"},
                "trial code finds checkpoints at host_path, on every runtime");
  if (storage->storage_path.find("..") != std::string::npos) {
    reader.Fail("storage_path", "must stay under host_path (no \"..\")");
  }
}

// Whether `prefix` has a ".." segment (Determined refuses "../", "/../", "/.." and "..").
bool ClimbsOut(const std::string& prefix) {
  for (size_t start = 0; start <= prefix.size();) {
    size_t end = prefix.find('/', start);
    if (end == std::string::npos) end = prefix.size();
    if (prefix.compare(start, end - start, "..") == 0) return true;
    start = end + 1;
  }
  return false;
}

void ReadBucket(ConfigReader& reader, CheckpointStorage* storage) {
  reader.Read("bucket", &storage->bucket);
  if (storage->bucket.empty()) {
    reader.Fail("bucket", "is required: the " + storage->type + " bucket checkpoints go to");
  }
  reader.Read("prefix", &storage->prefix);
  if (ClimbsOut(storage->prefix)) reader.Fail("prefix", "must not have a \"..\" segment");
  if (storage->type != "s3") return;
  reader.Read("access_key", &storage->access_key);
  reader.Read("secret_key", &storage->secret_key);
  if (storage->access_key.empty() != storage->secret_key.empty()) {
    reader.Fail(storage->access_key.empty() ? "access_key" : "secret_key",
                "is needed with " +
                    std::string(storage->access_key.empty() ? "secret_key" : "access_key") +
                    " (or leave both out: trials and the master then use their own credentials)");
  }
  reader.Read("endpoint_url", &storage->endpoint_url);
  const std::string& url = storage->endpoint_url;
  if (!url.empty() && !url.starts_with("http://") && !url.starts_with("https://")) {
    reader.Fail("endpoint_url", "must be an http:// or https:// URL, not \"" + url + "\"");
  }
}

}  // namespace

void ReadCheckpointStorage(ConfigReader& reader, CheckpointStorage* storage) {
  const std::string type = reader.Raw("type").as<std::string>("");
  for (const char* planned : kPlannedStorageTypes) {
    if (type != planned) continue;
    reader.AllowOtherKeys();
    return reader.Fail("type", "\"" + type +
                                   "\" checkpoint storage is not implemented yet; use type "
                                   "shared_fs, s3 or gcs");
  }
  reader.ReadOneOf("type", &storage->type, kStorageTypes);
  if (storage->type == "shared_fs") {
    ReadSharedFs(reader, storage);
  } else {
    ReadBucket(reader, storage);
  }
  reader.ReadInt("save_experiment_best", &storage->save_experiment_best, 0, 1000000);
  reader.ReadInt("save_trial_best", &storage->save_trial_best, 0, 1000000);
  reader.ReadInt("save_trial_latest", &storage->save_trial_latest, 0, 1000000);
}

namespace {

// Determined 0.38's experiment fields this project does not implement: accepted, each with a
// warning naming it, so a Determined config runs.
void IgnoreDeterminedOnlyFields(ConfigReader& reader) {
  reader.Ignore({"workspace", "project"}, "experiments are not grouped in workspaces here");
  reader.Ignore({"bind_mounts"}, "trials see the agent's file system on the process runtime");
  reader.Ignore({"min_checkpoint_period", "records_per_epoch", "scheduling_unit",
                 "perform_initial_validation", "optimizations"},
                "deprecated in Determined 0.38; trial code decides");
  reader.Ignore({"profiling", "log_policies", "preemption_timeout", "integrations", "security",
                 "tensorboard_storage", "slurm", "pbs", "data_layer", "debug", "checkpoint_policy"},
                "");
  // Free-form: trial code reads it from the experiment config it is given.
  reader.Raw("data");
  if (reader.Has("internal") && !reader.Raw("internal").IsNull()) {
    reader.Fail("internal", "must be null");
  }
}

void ReadPeriod(ConfigReader& reader, ExperimentConfig* config) {
  const nlohmann::json period = YamlToJson(reader.Raw("min_validation_period"));
  if (period.is_null()) return;
  auto parsed = searcher::ParseLength(period);
  if (!parsed.ok()) return reader.Fail("min_validation_period", parsed.status().message());
  config->min_validation_period = *parsed;
}

// `image`: one name, or one per slot type.
void ReadImage(ConfigReader& reader, ContainerEnvironment* container) {
  const YAML::Node image = reader.Raw("image");
  if (!image || image.IsNull()) return;
  if (image.IsScalar()) {
    container->image = image.as<std::string>("");
    return;
  }
  if (!image.IsMap()) return reader.Fail("image", "expected a name, or {cpu: NAME, cuda: NAME}");
  for (const auto& entry : image) {
    const std::string type = entry.first.as<std::string>("");
    if (type != "cpu" && type != "cuda" && type != "rocm") {
      reader.Fail("image." + type, "unknown slot type; expected cpu, cuda or rocm");
    } else if (!entry.second.IsScalar() || entry.second.as<std::string>("").empty()) {
      reader.Fail("image." + type, "expected an image name");
    } else {
      container->images[type] = entry.second.as<std::string>();
    }
  }
}

// `registry_auth`: Docker's auth config, kept as the JSON its X-Registry-Auth header carries.
void ReadRegistryAuth(ConfigReader& reader, ContainerEnvironment* container) {
  const nlohmann::json auth = YamlToJson(reader.Raw("registry_auth"));
  if (auth.is_null()) return;
  static const std::set<std::string> kKeys = {
      "username", "password", "auth", "email", "serveraddress", "identitytoken", "registrytoken"};
  if (!auth.is_object()) return reader.Fail("registry_auth", "expected a mapping");
  for (const auto& [key, value] : auth.items()) {
    if (!kKeys.contains(key)) {
      reader.Fail("registry_auth." + key,
                  "unknown; expected username, password, serveraddress, "
                  "auth, email, identitytoken or registrytoken");
    } else if (!value.is_string()) {
      reader.Fail("registry_auth." + key, "expected text");
    }
  }
  container->registry_auth_json = auth.dump();
}

}  // namespace

namespace {

constexpr const char* kRedacted = "********";

// Replaces the secrets of environment.registry_auth; true when there were any.
bool RedactRegistryAuth(YAML::Node environment) {
  if (!environment["registry_auth"].IsMap()) return false;
  YAML::Node auth = environment["registry_auth"];
  bool redacted = false;
  for (const char* secret : {"password", "auth", "identitytoken", "registrytoken"}) {
    if (auth[secret]) {
      auth[secret] = kRedacted;
      redacted = true;
    }
  }
  return redacted;
}

// Replaces the value of each environment.environment_variables entry whose name says it holds a
// secret; true when there were any.
bool RedactSecretVariables(YAML::Node environment) {
  if (!environment["environment_variables"].IsSequence()) return false;
  bool redacted = false;
  for (YAML::Node entry : environment["environment_variables"]) {
    const std::string text = entry.IsScalar() ? entry.as<std::string>("") : "";
    const size_t equals = text.find('=');
    if (equals == std::string::npos || !NameSuggestsSecret(text.substr(0, equals))) continue;
    entry = text.substr(0, equals + 1) + kRedacted;
    redacted = true;
  }
  return redacted;
}

// Replaces checkpoint_storage's S3 keys (Determined prints them as "********" too); true when
// there were any.
bool RedactStorageKeys(YAML::Node storage) {
  if (!storage.IsMap()) return false;
  bool redacted = false;
  for (const char* secret : {"access_key", "secret_key"}) {
    if (storage[secret] && !storage[secret].IsNull()) {
      storage[secret] = kRedacted;
      redacted = true;
    }
  }
  return redacted;
}

}  // namespace

bool NameSuggestsSecret(const std::string& name) {
  std::string upper = name;
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  for (const char* word :
       {"SECRET", "PASSWORD", "PASSWD", "TOKEN", "KEY", "CREDENTIAL", "AUTH", "PRIVATE", "CERT"}) {
    if (upper.find(word) != std::string::npos) return true;
  }
  return false;
}

std::string RedactedConfig(const std::string& config_yaml) {
  YAML::Node doc;
  try {
    doc = YAML::Load(config_yaml);
  } catch (const YAML::Exception&) {
    // Stored only after it parsed: not expected. It may hold secrets: not shown.
    return "# the stored config is not valid YAML and is not shown\n";
  }
  if (Status checked = CheckYamlDocument(doc); !checked.ok()) {
    return "# the stored config is not shown: " + checked.message() + "\n";
  }
  if (!doc.IsMap()) return config_yaml;
  bool redacted = RedactStorageKeys(doc["checkpoint_storage"]);
  if (doc["environment"].IsMap()) {
    redacted |= RedactRegistryAuth(doc["environment"]);
    redacted |= RedactSecretVariables(doc["environment"]);
  }
  if (!redacted) return config_yaml;
  YAML::Emitter out;
  out << doc;
  return std::string(out.c_str()) + "\n";
}

void ReadContainerEnvironment(ConfigReader& reader, ContainerEnvironment* container) {
  ReadImage(reader, container);
  reader.Read("force_pull_image", &container->force_pull_image);
  ReadRegistryAuth(reader, container);
}

void ReadEnvironment(ConfigReader& reader, std::map<std::string, std::string>* variables,
                     ContainerEnvironment* container) {
  ReadContainerEnvironment(reader, container);
  reader.Ignore({"ports", "proxy_ports", "add_capabilities", "drop_capabilities", "pod_spec"}, "");
  const nlohmann::json list = YamlToJson(reader.Raw("environment_variables"));
  if (list.is_null()) return;
  if (!list.is_array()) {
    return reader.Fail("environment_variables", "must be a list of \"KEY=VALUE\"");
  }
  for (const auto& entry : list) {
    const std::string text = entry.is_string() ? entry.get<std::string>() : entry.dump();
    const size_t eq = text.find('=');
    if (!entry.is_string() || eq == std::string::npos || eq == 0) {
      reader.Fail("environment_variables", "\"" + text + "\" is not KEY=VALUE");
      continue;
    }
    if (std::string why = WhyNotAWorkloadVariable(text.substr(0, eq)); !why.empty()) {
      reader.Fail("environment_variables", why);
      continue;
    }
    (*variables)[text.substr(0, eq)] = text.substr(eq + 1);
  }
}

Result<ExperimentConfig> ParseExperimentConfigText(const std::string& yaml) {
  YAML::Node doc;
  try {
    doc = YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    return InvalidArgument("experiment config is not YAML: " + std::string(e.what()));
  }
  return ParseExperimentConfig(doc);
}

Result<ExperimentConfig> ParseExperimentConfig(const YAML::Node& doc) {
  if (!doc.IsMap()) return InvalidArgument("the experiment config must be a YAML mapping");
  // Its callers load the text themselves (the experiment service, from `det` and REST).
  DET_RETURN_IF_ERROR(CheckYamlDocument(doc));
  ExperimentConfig config;
  ConfigReader reader(doc);
  reader.Read("name", &config.name);
  reader.Read("description", &config.description);
  reader.Read("labels", &config.labels);
  ReadEntrypoint(reader, &config.entrypoint);
  std::vector<std::string> errors;
  config.hyperparameters = searcher::ParseHyperparameters(reader.Raw("hyperparameters"), &errors);
  for (std::string& error : errors) reader.AddError(std::move(error));
  if (reader.Has("searcher")) {
    config.searcher = searcher::ReadSearcherConfig(reader.Child("searcher"));
  } else {
    reader.Fail("searcher", "is required");
  }
  ReadResources(reader.Child("resources"), &config.resources);
  reader.ReadInt("max_restarts", &config.max_restarts, 0, 1000000);
  if (reader.Child("retention_policy").Has("log_retention_days")) {
    int days = -1;
    reader.Child("retention_policy").ReadInt("log_retention_days", &days, -1, 32767);
    config.log_retention_days = days;
  }
  ReadPeriod(reader, &config);
  if (reader.Has("checkpoint_storage")) {
    ReadCheckpointStorage(reader.Child("checkpoint_storage"), &config.checkpoint_storage);
  } else {
    reader.Fail("checkpoint_storage",
                "is required (type shared_fs with host_path), here or in master.yaml");
  }
  IgnoreDeterminedOnlyFields(reader);
  ReadEnvironment(reader.Child("environment"), &config.environment_variables, &config.container);
  ConfigReader& reproducibility = reader.Child("reproducibility");
  if (reproducibility.Has("experiment_seed")) {
    int64_t seed = -1;
    reproducibility.ReadInt("experiment_seed", &seed, 0, 0xffffffffLL);
    if (seed >= 0) config.experiment_seed = static_cast<uint32_t>(seed);
  }
  DET_RETURN_IF_ERROR(reader.Finish());
  config.warnings = reader.warnings();
  return config;
}

YAML::Node WithClusterDefaults(const YAML::Node& doc, const YAML::Node& checkpoint_storage,
                               bool fill_fields) {
  if (!doc.IsMap() || !checkpoint_storage.IsMap()) return doc;
  YAML::Node merged = YAML::Clone(doc);
  const YAML::Node own = doc["checkpoint_storage"];
  if (!own.IsDefined() || own.IsNull()) {
    merged["checkpoint_storage"] = YAML::Clone(checkpoint_storage);
    return merged;
  }
  if (!fill_fields) return merged;
  const bool same_type =
      !own["type"].IsDefined() || !checkpoint_storage["type"].IsDefined() ||
      own["type"].as<std::string>("") == checkpoint_storage["type"].as<std::string>("");
  if (!own.IsMap() || !same_type) return merged;  // another kind of storage: the experiment's own
  YAML::Node storage = merged["checkpoint_storage"];
  for (const auto& field : checkpoint_storage) {
    const std::string key = field.first.as<std::string>("");
    if (!storage[key].IsDefined()) storage[key] = YAML::Clone(field.second);
  }
  return merged;
}

YAML::Node WithOverrides(const YAML::Node& doc, const YAML::Node& overrides) {
  if (!doc.IsMap() || !overrides.IsMap()) return YAML::Clone(overrides);
  YAML::Node merged = YAML::Clone(doc);
  for (const auto& field : overrides) {
    const std::string key = field.first.as<std::string>("");
    merged[key] = merged[key].IsDefined() ? WithOverrides(merged[key], field.second)
                                          : YAML::Clone(field.second);
  }
  return merged;
}

Result<YAML::Node> WithSettings(const YAML::Node& doc, const std::vector<std::string>& settings) {
  YAML::Node result = doc.IsMap() ? YAML::Clone(doc) : YAML::Node(YAML::NodeType::Map);
  for (const std::string& setting : settings) {
    const size_t equals = setting.find('=');
    const std::string path = setting.substr(0, equals);
    if (equals == std::string::npos || path.empty() || path.front() == '.' || path.back() == '.' ||
        path.find("..") != std::string::npos) {
      return InvalidArgument("--config \"" + setting + "\": expected key.path=value");
    }
    YAML::Node value;
    try {
      value = YAML::Load(setting.substr(equals + 1));
    } catch (const YAML::Exception& e) {
      return InvalidArgument("--config \"" + setting + "\": the value is not YAML: " + e.what());
    }
    YAML::Node at = result;
    size_t from = 0;
    for (size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', from)) {
      const std::string key = path.substr(from, dot - from);
      if (!at[key].IsDefined() || at[key].IsNull()) at[key] = YAML::Node(YAML::NodeType::Map);
      if (!at[key].IsMap()) {
        return InvalidArgument("--config \"" + setting + "\": " + path.substr(0, dot) +
                               " is not a mapping");
      }
      at.reset(at[key]);
      from = dot + 1;
    }
    at[path.substr(from)] = value;
  }
  return result;
}

}  // namespace det::master::experiment

#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/config.h"
#include "common/status.h"
#include "master/experiments/searcher/hyperparameters.h"
#include "master/experiments/searcher/searcher_config.h"

namespace det::master::experiment {

// `resources:` of an experiment: what each trial asks of the scheduler.
struct TrialResources {
  int slots_per_trial = 1;
  std::optional<int> max_slots;  // the whole experiment at once (fair share, demand)
  double weight = 1;
  std::optional<int> priority;  // 1 (most urgent) .. 99; unset: the pool's default
  std::string resource_pool;    // empty: the master's default compute pool
  bool is_single_node = false;  // trials may span agents unless this is set
  int64_t shm_size = 0;         // bytes of /dev/shm in a trial's container (0: the engine's)
};

// `environment:` beyond its variables: the container image trials run in on agents whose
// runtime is docker (Determined's names).
struct ContainerEnvironment {
  std::string image;                          // `image: NAME`
  std::map<std::string, std::string> images;  // `image: {cpu: A, cuda: B}`
  bool force_pull_image = false;
  std::string registry_auth_json;  // `registry_auth: {username, password, serveraddress, ...}`
};

// `checkpoint_storage:`: where trial code writes checkpoints, and which the experiment keeps when
// it ends. Type shared_fs is a folder every agent mounts; s3 and gcs are buckets (Determined's
// fields; unset ones are "", as Determined's null).
struct CheckpointStorage {
  std::string type = "shared_fs";
  std::string host_path;     // shared_fs, required: a folder every agent mounts at the same place
  std::string storage_path;  // shared_fs: under host_path
  std::string bucket;        // s3, gcs: required
  std::string prefix;        // s3, gcs: keys start with it (no ".." segment)
  std::string access_key;    // s3: else the trial's and the master's own credentials
  std::string secret_key;    // s3
  std::string endpoint_url;  // s3: an S3-compatible endpoint ("" for AWS)
  int save_experiment_best = 0;
  int save_trial_best = 1;
  int save_trial_latest = 1;
  // A bucket (s3, gcs) rather than a folder.
  bool IsObjectStore() const { return type == "s3" || type == "gcs"; }
};

// An experiment's configuration (Determined's field names and defaults).
struct ExperimentConfig {
  std::string name;
  std::string description;
  std::vector<std::string> labels;
  std::vector<std::string> entrypoint;  // a single string runs through /bin/sh -c
  searcher::Hyperparameters hyperparameters;
  searcher::SearcherConfig searcher;
  TrialResources resources;
  int max_restarts = 5;  // failures a trial may have (not those the cluster caused)
  // retention_policy.log_retention_days: days the trials' logs are kept after they end (-1:
  // forever); unset: the cluster's retention_policy.
  std::optional<int> log_retention_days;
  // `min_validation_period: {batches|records|epochs: N}`: unit and count; unset: none.
  std::optional<std::pair<std::string, int64_t>> min_validation_period;
  CheckpointStorage checkpoint_storage;
  std::map<std::string, std::string> environment_variables;  // environment.environment_variables
  ContainerEnvironment container;                            // environment.image, ...
  std::optional<uint32_t> experiment_seed;                   // reproducibility.experiment_seed
  // Fields accepted but not acted on (Determined's that this project lacks, deprecated forms),
  // each naming its field: shown to whoever submits the experiment.
  std::vector<std::string> warnings;
};

// Reads `checkpoint_storage:` (an experiment's or master.yaml's), recording errors on `reader`.
void ReadCheckpointStorage(ConfigReader& reader, CheckpointStorage* storage);

// Reads `environment`'s image, force_pull_image and registry_auth from `reader` (an experiment's
// or a command's `environment`), recording errors on it. Other keys are the caller's.
void ReadContainerEnvironment(ConfigReader& reader, ContainerEnvironment* container);
// Reads all of `environment` (an experiment's or a command's): the container's fields and
// `environment_variables` ("KEY=VALUE" each; det's own variables refused); Determined's
// Kubernetes and capability fields are ignored with a warning.
void ReadEnvironment(ConfigReader& reader, std::map<std::string, std::string>* variables,
                     ContainerEnvironment* container);

// Whether an environment variable's name says its value is a secret: it contains SECRET,
// PASSWORD, PASSWD, TOKEN, KEY, CREDENTIAL, AUTH, PRIVATE or CERT, in any case.
bool NameSuggestsSecret(const std::string& name);

// `config_yaml` as readers of the experiment may see it: the secrets of environment.registry_auth
// (password, auth, identitytoken, registrytoken) and the values of environment_variables whose
// names suggest secrets (NameSuggestsSecret), and checkpoint_storage's access_key and secret_key,
// replaced by "********"; the trial's runs still get
// the real values. Unchanged, comments and all, when it has none. `config_yaml` is text
// ParseExperimentConfig accepted (every stored config is); other text comes back unchanged.
std::string RedactedConfig(const std::string& config_yaml);

// Reads an experiment config; InvalidArgument listing every problem by field path ("searcher.
// max_trials: is required for searcher random"), unknown fields included, or naming the first
// place CheckYamlDocument (common/yaml_json.h) refuses: text that is not UTF-8, an alias inside
// its own anchor, aliases that expand past its limits.
Result<ExperimentConfig> ParseExperimentConfig(const YAML::Node& doc);
// The same from the config's text (a stored one: master.yaml's defaults were merged in when the
// experiment was created); InvalidArgument "experiment config is not YAML: ..." for text that
// does not load.
Result<ExperimentConfig> ParseExperimentConfigText(const std::string& yaml);

// `doc` with the cluster's defaults merged in as Determined merges them: master.yaml's
// `checkpoint_storage` where the experiment has none, and (with `fill_fields`: master.yaml set it
// itself, rather than leaving the built-in default) its fields the experiment's lacks when both
// are of one type. `doc` itself is left as it is; anything not a mapping is returned as is.
YAML::Node WithClusterDefaults(const YAML::Node& doc, const YAML::Node& checkpoint_storage,
                               bool fill_fields = true);

// `doc` with `overrides` merged over it, as Determined merges a continued experiment's config:
// mappings key by key, anything else (a list, a scalar) replaced whole. Neither is changed.
YAML::Node WithOverrides(const YAML::Node& doc, const YAML::Node& overrides);
// `doc` (a mapping, or nothing) with each of `settings` set, as Determined's CLI reads --config:
// "a.b.c=value" sets doc.a.b.c to `value` read as YAML (200 a number, true a bool, x a string),
// making the mappings on the way. InvalidArgument naming a setting without "=" or a key, or whose
// path crosses something that is not a mapping.
Result<YAML::Node> WithSettings(const YAML::Node& doc, const std::vector<std::string>& settings);

}  // namespace det::master::experiment

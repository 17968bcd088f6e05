// Experiment configs: Determined's fields and defaults, and every bad field named by its path.
#include "master/experiments/experiment/experiment_config.h"

#include <gtest/gtest.h>

#include "common/yaml_json.h"

namespace det::master::experiment {
namespace {

constexpr const char* kAsha = R"(
name: mnist-asha
description: tune the learning rate
labels: [demo, asha]
entrypoint: python3 train.py
hyperparameters:
  lr: {type: log, base: 10, minval: -4, maxval: -1}
  layers: {type: int, minval: 1, maxval: 3}
  batch_size: 64
searcher:
  name: adaptive_asha
  metric: validation_loss
  smaller_is_better: true
  max_trials: 16
  max_time: 900
  time_metric: batches
  mode: aggressive
resources: {slots_per_trial: 2, max_slots: 8, priority: 30, weight: 2, resource_pool: gpu}
max_restarts: 2
min_validation_period: {batches: 100}
checkpoint_storage: {type: shared_fs, host_path: /mnt/ckpt, storage_path: det, save_trial_best: 2}
environment: {environment_variables: ["A=1", "B=x=y"]}
reproducibility: {experiment_seed: 1234}
)";

TEST(ExperimentConfigTest, DeterminedsFieldsAreRead) {
  auto config = ParseExperimentConfig(YAML::Load(kAsha));
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->name, "mnist-asha");
  EXPECT_EQ(config->labels, (std::vector<std::string>{"demo", "asha"}));
  EXPECT_EQ(config->entrypoint, std::vector<std::string>{"python3 train.py"});
  EXPECT_EQ(config->hyperparameters.size(), 3u);
  EXPECT_EQ(config->searcher.name, "adaptive_asha");
  EXPECT_EQ(config->searcher.max_trials, 16);
  EXPECT_EQ(config->searcher.mode, "aggressive");
  EXPECT_EQ(config->resources.slots_per_trial, 2);
  EXPECT_EQ(config->resources.max_slots, 8);
  EXPECT_EQ(config->resources.priority, 30);
  EXPECT_FALSE(config->resources.is_single_node);
  EXPECT_EQ(config->max_restarts, 2);
  EXPECT_EQ(config->min_validation_period, (std::pair<std::string, int64_t>{"batches", 100}));
  EXPECT_EQ(config->checkpoint_storage.save_trial_best, 2);
  EXPECT_EQ(config->checkpoint_storage.save_trial_latest, 1);
  EXPECT_EQ(config->environment_variables.at("B"), "x=y");
  EXPECT_EQ(config->experiment_seed, 1234u);
}

TEST(ExperimentConfigTest, DefaultsAreDetermineds) {
  auto config = ParseExperimentConfig(YAML::Load(R"(
entrypoint: [python3, train.py]
searcher: {name: single, metric: loss, max_length: {batches: 500}}
checkpoint_storage: {host_path: /tmp/ckpt}
)"));
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->max_restarts, 5);
  EXPECT_EQ(config->resources.slots_per_trial, 1);
  EXPECT_EQ(config->searcher.time_metric, "batches");
  EXPECT_EQ(config->searcher.max_time, 500);
  EXPECT_TRUE(config->searcher.smaller_is_better);
  EXPECT_EQ(config->checkpoint_storage.save_experiment_best, 0);
  EXPECT_FALSE(config->experiment_seed.has_value());
}

struct BadCase {
  const char* yaml;
  const char* error;
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.error; }

class BadExperimentConfigTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadExperimentConfigTest, IsRefusedNamingTheField) {
  const std::string base =
      "entrypoint: train\ncheckpoint_storage: {host_path: /c}\n"
      "searcher: {name: random, metric: loss, max_trials: 2, max_time: 10, time_metric: batches}\n";
  YAML::Node doc = YAML::Load(base);
  YAML::Node extra = YAML::Load(GetParam().yaml);
  for (const auto& entry : extra) doc[entry.first.Scalar()] = entry.second;
  auto config = ParseExperimentConfig(doc);
  ASSERT_FALSE(config.ok()) << GetParam().yaml;
  EXPECT_NE(config.status().message().find(GetParam().error), std::string::npos)
      << config.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Fields, BadExperimentConfigTest,
    ::testing::Values(
        BadCase{"entrypoint: []", "entrypoint: is required"},
        BadCase{"searcher: {name: bayes, metric: loss}",
                "searcher.name: \"bayes\" is not allowed; allowed: single, random, grid, "
                "async_halving, adaptive_asha"},
        BadCase{"searcher: {name: random, metric: loss, max_time: 10, time_metric: batches}",
                "searcher.max_trials: is required for searcher random"},
        BadCase{"searcher: {name: grid, max_time: 10, time_metric: batches}",
                "searcher.metric: is required"},
        BadCase{"searcher: {name: adaptive_asha, metric: loss, max_trials: 4}",
                "searcher.max_time: is required for searcher adaptive_asha"},
        BadCase{"searcher: {name: single, metric: loss, max_time: 5}",
                "searcher.time_metric: is required with max_time"},
        BadCase{"resources: {slots: 2}", "resources.slots: is a command's field"},
        BadCase{"internal: {x: 1}", "internal: must be null"},
        BadCase{"searcher: {name: async_halving, metric: loss, max_trials: 4, max_time: 9, "
                "time_metric: batches}",
                "searcher.num_rungs: is required for searcher async_halving"},
        BadCase{"searcher: {name: single, metric: loss, max_length: {steps: 5}}",
                "searcher.max_length: unit \"steps\" is not allowed"},
        BadCase{"hyperparameters: {lr: {type: double, minval: 1}}",
                "hyperparameters.lr.maxval: is required for type double"},
        BadCase{"resources: {slots_per_trial: -1}", "resources.slots_per_trial"},
        BadCase{"resources: {priority: 100}", "resources.priority"},
        BadCase{"resources: {gpus: 2}", "resources.gpus: unknown field"},
        BadCase{"checkpoint_storage: {type: azure, container: c}", "checkpoint_storage.type"},
        BadCase{"checkpoint_storage: {type: gcs}", "checkpoint_storage.bucket: is required"},
        BadCase{"checkpoint_storage: {type: gcs, bucket: b, access_key: AKID}",
                "checkpoint_storage.access_key: unknown field"},
        BadCase{"checkpoint_storage: {type: gcs, bucket: b, prefix: ../up}",
                "checkpoint_storage.prefix: must not have a \"..\" segment"},
        BadCase{"checkpoint_storage: {type: s3, host_path: /c, bucket: b}",
                "checkpoint_storage.host_path: unknown field"},
        BadCase{"checkpoint_storage: {type: s3}", "checkpoint_storage.bucket: is required"},
        BadCase{"checkpoint_storage: {type: s3, bucket: b, prefix: a/../b}",
                "checkpoint_storage.prefix: must not have a \"..\" segment"},
        BadCase{"checkpoint_storage: {type: s3, bucket: b, access_key: AKID}",
                "checkpoint_storage.secret_key: is needed with access_key"},
        BadCase{"checkpoint_storage: {type: s3, bucket: b, endpoint_url: minio:9000}",
                "checkpoint_storage.endpoint_url: must be an http:// or https:// URL"},
        BadCase{"checkpoint_storage: {storage_path: x}",
                "checkpoint_storage.host_path: is required"},
        BadCase{"min_validation_period: {batches: 0}", "min_validation_period: must be"},
        BadCase{"environment: {environment_variables: [NOEQUALS]}",
                "environment.environment_variables: \"NOEQUALS\" is not KEY=VALUE"},
        BadCase{"environment: {environment_variables: [DET_SESSION_TOKEN=forged]}",
                "environment.environment_variables: DET_SESSION_TOKEN is set by det"},
        BadCase{"environment: {environment_variables: [CUDA_VISIBLE_DEVICES=0,1,2]}",
                "CUDA_VISIBLE_DEVICES is set by det"},
        BadCase{"environment: {environment_variables: [\"A B=1\"]}",
                "\"A B\" is not a variable name"},
        BadCase{"reproducibility: {experiment_seed: -1}", "reproducibility.experiment_seed"},
        BadCase{"max_restart: 3", "max_restart: unknown field"}));

constexpr const char* kMinimal =
    "entrypoint: python3 train.py\n"
    "searcher: {name: single, metric: loss, max_length: {batches: 1}}\n"
    "checkpoint_storage: {host_path: /tmp/ckpt}\n";

// Found by config_yaml_fuzzer: a value that is not UTF-8 reached nlohmann::json::dump() in an
// error message, which threw type_error 316 out of the parser.
// The config readers see (REST, det experiment describe --json, the WebUI) hides the values of
// variables named as secrets; the trial's runs get them.
TEST(ExperimentConfigTest, ReadersOfTheConfigDoNotSeeSecretVariablesButTheTrialGetsThem) {
  std::string config = kAsha;
  const std::string plain_environment = R"(environment: {environment_variables: ["A=1", "B=x=y"]})";
  config.replace(config.find(plain_environment), plain_environment.size(),
                 "environment: {environment_variables: [WANDB_API_KEY=k-4242, MODEL=linear, "
                 "aws_secret_access_key=s-4242, DB_PASSWORD=p=4242, HF_TOKEN=]}");
  const std::string shown = RedactedConfig(config);
  EXPECT_EQ(shown.find("4242"), std::string::npos) << shown;
  EXPECT_NE(shown.find("WANDB_API_KEY=********"), std::string::npos) << shown;
  EXPECT_NE(shown.find("aws_secret_access_key=********"), std::string::npos) << shown;
  EXPECT_NE(shown.find("MODEL=linear"), std::string::npos) << shown;
  EXPECT_TRUE(ParseExperimentConfig(YAML::Load(shown)).ok()) << "what is shown still parses";
  auto parsed = ParseExperimentConfig(YAML::Load(config));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->environment_variables.at("WANDB_API_KEY"), "k-4242");
  EXPECT_EQ(parsed->environment_variables.at("DB_PASSWORD"), "p=4242");
  EXPECT_EQ(RedactedConfig(kAsha), kAsha) << "no secret: unchanged";
}

TEST(ExperimentConfigTest, NamesThatSuggestSecretsAreKnownInAnyCase) {
  for (const char* name : {"WANDB_API_KEY", "aws_secret_access_key", "DB_PASSWORD", "HF_TOKEN",
                           "GOOGLE_APPLICATION_CREDENTIALS", "Ssh_Private", "PGPASSWD"}) {
    EXPECT_TRUE(NameSuggestsSecret(name)) << name;
  }
  for (const char* name : {"MODEL", "BATCH_SIZE", "PYTHONPATH", "NCCL_DEBUG"}) {
    EXPECT_FALSE(NameSuggestsSecret(name)) << name;
  }
}

TEST(ExperimentConfigTest, AConfigThatIsNotUtf8IsAnErrorNotAnException) {
  const std::string entrypoint = "entrypoint: python3 train.py\n";
  const std::string storage = "checkpoint_storage: {host_path: /tmp/ckpt}\n";
  for (const std::string& bad :
       {entrypoint + storage +
            "searcher: {name: single, metric: loss, max_length: {records: 10\xa1" + "00}}\n",
        kMinimal + std::string("name: caf\xc3\n"), kMinimal + std::string("\xff: 1\n")}) {
    auto config = ParseExperimentConfig(YAML::Load(bad));
    ASSERT_FALSE(config.ok()) << bad;
    EXPECT_NE(config.status().message().find("not UTF-8 text"), std::string::npos)
        << config.status().message();
  }
}

// Found by rest_json_fuzzer: a range without minval was compared with the missing node, whose
// Type() threw YAML::InvalidNode out of the parser.
TEST(ExperimentConfigTest, ARangeWithoutMinvalIsAnErrorNotAnException) {
  auto config = ParseExperimentConfig(YAML::Load(
      std::string(kMinimal) + "hyperparameters: {lr: {type: log, base: 10, maxval: -1}}"));
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("hyperparameters.lr.minval: is required for type log"),
            std::string::npos)
      << config.status().message();
}

// Found by review and reproduced with config_yaml_fuzzer: yaml-cpp makes `&e [x, *e]` a list that
// contains itself, and reading it recursed until the stack overflowed; aliases of aliases (a
// "billion laughs") expanded for minutes.
TEST(ExperimentConfigTest, AnAliasInsideItsOwnAnchorOrAnExplodingOneIsRefused) {
  auto cycle = ParseExperimentConfig(
      YAML::Load("entrypoint: &e [python3, *e]\n"
                 "searcher: {name: single, metric: loss, max_length: {batches: 1}}\n"
                 "checkpoint_storage: {host_path: /tmp/ckpt}\n"));
  ASSERT_FALSE(cycle.ok());
  EXPECT_NE(cycle.status().message().find("entrypoint[1][1]"), std::string::npos)
      << cycle.status().message();
  std::string laughs = kMinimal;
  laughs += "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 9; ++i) {
    laughs += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) laughs += (k ? ", *a" : "*a") + std::to_string(i - 1);
    laughs += "]\n";
  }
  auto exploded = ParseExperimentConfig(YAML::Load(laughs));
  ASSERT_FALSE(exploded.ok());
  EXPECT_NE(exploded.status().message().find("values with aliases followed"), std::string::npos)
      << exploded.status().message();
  EXPECT_TRUE(ParseExperimentConfig(
                  YAML::Load(std::string(kMinimal) + "labels: &l [a, b]\ndescription: x\n"))
                  .ok());
}

// Found by config_yaml_fuzzer: `vals` missing from a categorical hyperparameter (and, by review,
// `val` from a const one) was read from the missing node, whose Type() threw YAML::InvalidNode.
TEST(ExperimentConfigTest, ACategoricalWithoutValsOrAConstWithoutValIsAnErrorNotAnException) {
  auto categorical = ParseExperimentConfig(
      YAML::Load(std::string(kMinimal) + "hyperparameters: {b: {type: categorical, vans: [x]}}"));
  ASSERT_FALSE(categorical.ok());
  EXPECT_NE(categorical.status().message().find("hyperparameters.b.vals: must be a non-empty list"),
            std::string::npos)
      << categorical.status().message();
  auto constant = ParseExperimentConfig(
      YAML::Load(std::string(kMinimal) + "hyperparameters: {c: {type: const}}"));
  ASSERT_FALSE(constant.ok());
  EXPECT_NE(constant.status().message().find("hyperparameters.c.val: is required for type const"),
            std::string::npos)
      << constant.status().message();
}

// Determined 0.38's experiment files (its Core API tutorials' among them) load: single, random and
// grid need no length, the fields of Determined's this project does not implement are warnings
// naming each one, deprecated forms work with a warning, and keys Determined does not know stay
// errors.
TEST(DeterminedConfigTest, Determined038FieldsAreAcceptedWithAWarningNamingEach) {
  auto config = ParseExperimentConfig(YAML::Load(R"(
name: core-api-stage-3
entrypoint: python3 3_hpsearch.py
workspace: research
project: asha
checkpoint_storage: {type: shared_fs, host_path: /c, propagation: rprivate}
hyperparameters: {increment_by: {type: int, minval: 1, maxval: 8}}
searcher: {name: single, metric: x, source_trial_id: 3}
resources: {slots_per_trial: 1, native_parallel: false}
environment: {proxy_ports: [{proxy_port: 8888}]}
optimizations: {aggregation_frequency: 1}
data: {url: https://example.com/data.csv}
max_restarts: 0
)"));
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->searcher.max_time, 0);
  EXPECT_EQ(config->searcher.source_trial_id, 3) << "a warm start, read";
  std::string all;
  for (const std::string& w : config->warnings) all += w + "\n";
  for (const char* field :
       {"workspace: not implemented here; ignored", "project:", "checkpoint_storage.propagation:",
        "resources.native_parallel:", "environment.proxy_ports:", "optimizations:"}) {
    EXPECT_NE(all.find(field), std::string::npos) << field << " in\n" << all;
  }
  EXPECT_EQ(all.find("data"), std::string::npos) << "data is free-form and given to trial code";
  EXPECT_EQ(all.find("source_trial_id"), std::string::npos) << "warm starts are implemented";
  auto both = ParseExperimentConfig(YAML::Load(
      "entrypoint: x\ncheckpoint_storage: {host_path: /c}\nsearcher: {name: single, metric: x, "
      "source_trial_id: 3, source_checkpoint_uuid: u}\n"));
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.status().message().find("exclusive"), std::string::npos)
      << both.status().ToString();
  auto unknown = ParseExperimentConfig(YAML::Load(
      "entrypoint: x\ncheckpoint_storage: {host_path: /c}\nsearcher: {name: single, metric: x}\n"
      "speling: 1\n"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("speling: unknown field"), std::string::npos);
}

TEST(DeterminedConfigTest, MaxLengthStillWorksWithADeprecationWarning) {
  auto config = ParseExperimentConfig(
      YAML::Load("entrypoint: x\ncheckpoint_storage: {host_path: /c}\n"
                 "searcher: {name: single, metric: x, max_length: {batches: 100}}\n"));
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->searcher.max_time, 100);
  EXPECT_EQ(config->searcher.time_metric, "batches");
  ASSERT_EQ(config->warnings.size(), 1u);
  EXPECT_NE(config->warnings[0].find("searcher.max_length: is deprecated"), std::string::npos)
      << config->warnings[0];
}

TEST(DeterminedConfigTest, OtherCheckpointStorageKindsAreNamedAsNotYetImplemented) {
  auto config = ParseExperimentConfig(
      YAML::Load("entrypoint: x\nsearcher: {name: single, metric: x}\n"
                 "checkpoint_storage: {type: azure, container: c, save_trial_best: 1}\n"));
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find(
                "checkpoint_storage.type: \"azure\" checkpoint storage is not implemented yet"),
            std::string::npos)
      << config.status().message();
}

TEST(DeterminedConfigTest, GcsStorageTakesDeterminedsFields) {
  auto config = ParseExperimentConfig(
      YAML::Load("entrypoint: x\nsearcher: {name: single, metric: x}\n"
                 "checkpoint_storage: {type: gcs, bucket: ckpt, prefix: team/a, "
                 "save_trial_latest: 2}\n"));
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  const CheckpointStorage& storage = config->checkpoint_storage;
  EXPECT_TRUE(storage.IsObjectStore());
  EXPECT_EQ(storage.type, "gcs");
  EXPECT_EQ(storage.bucket, "ckpt");
  EXPECT_EQ(storage.prefix, "team/a");
  EXPECT_EQ(storage.save_trial_latest, 2);
  EXPECT_EQ(storage.save_trial_best, 1);
}

TEST(DeterminedConfigTest, S3StorageTakesDeterminedsFieldsWithNullsAsUnset) {
  auto config = ParseExperimentConfig(
      YAML::Load("entrypoint: x\nsearcher: {name: single, metric: x}\n"
                 "checkpoint_storage: {type: s3, bucket: ckpt, prefix: /team/a/, access_key: AKID,"
                 " secret_key: s3cr3t, endpoint_url: 'http://minio:9000', save_trial_best: 2}\n"));
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  const CheckpointStorage& storage = config->checkpoint_storage;
  EXPECT_TRUE(storage.IsObjectStore());
  EXPECT_EQ(storage.bucket, "ckpt");
  EXPECT_EQ(storage.prefix, "/team/a/");
  EXPECT_EQ(storage.access_key, "AKID");
  EXPECT_EQ(storage.secret_key, "s3cr3t");
  EXPECT_EQ(storage.endpoint_url, "http://minio:9000");
  EXPECT_EQ(storage.save_trial_best, 2);
  EXPECT_EQ(storage.save_trial_latest, 1);

  auto nulls = ParseExperimentConfig(
      YAML::Load("entrypoint: x\nsearcher: {name: single, metric: x}\n"
                 "checkpoint_storage: {type: s3, bucket: ckpt, prefix: null, access_key: null,"
                 " secret_key: null, endpoint_url: null}\n"));
  ASSERT_TRUE(nulls.ok()) << nulls.status().ToString();
  EXPECT_EQ(nulls->checkpoint_storage.access_key, "");
  EXPECT_EQ(nulls->checkpoint_storage.endpoint_url, "");
}

TEST(DeterminedConfigTest, S3KeysAreRedactedWhereverTheConfigIsShown) {
  const std::string text =
      "entrypoint: x\ncheckpoint_storage: {type: s3, bucket: ckpt, access_key: AKIDSHOWN,"
      " secret_key: s3cr3t}\n";
  const std::string shown = RedactedConfig(text);
  EXPECT_EQ(shown.find("s3cr3t"), std::string::npos) << shown;
  EXPECT_EQ(shown.find("AKIDSHOWN"), std::string::npos) << shown;
  EXPECT_NE(shown.find("bucket: ckpt"), std::string::npos) << shown;
  const std::string without = "entrypoint: x\ncheckpoint_storage: {type: s3, bucket: ckpt}\n";
  EXPECT_EQ(RedactedConfig(without), without) << "nothing to hide: unchanged";
}

TEST(DeterminedConfigTest, ClusterS3StorageFillsTheExperimentsFields) {
  const YAML::Node cluster = YAML::Load("{type: s3, bucket: det-example-checkpoints}");
  const YAML::Node partial = YAML::Load(
      "entrypoint: x\nsearcher: {name: single, metric: x}\n"
      "checkpoint_storage: {type: s3, prefix: exp-a}\n");
  auto filled = ParseExperimentConfig(WithClusterDefaults(partial, cluster));
  ASSERT_TRUE(filled.ok()) << filled.status().ToString();
  EXPECT_EQ(filled->checkpoint_storage.bucket, "det-example-checkpoints");
  EXPECT_EQ(filled->checkpoint_storage.prefix, "exp-a");
}

// master.yaml's checkpoint_storage is each experiment's default, merged field by field when both
// are of one type, and not at all when the experiment names another type.
TEST(DeterminedConfigTest, ClusterCheckpointStorageIsMergedAsDeterminedMergesIt) {
  const YAML::Node cluster =
      YAML::Load("{type: shared_fs, host_path: /srv/ckpt, storage_path: det, save_trial_best: 3}");
  const YAML::Node none = YAML::Load("entrypoint: x\nsearcher: {name: single, metric: x}\n");
  auto merged = ParseExperimentConfig(WithClusterDefaults(none, cluster));
  ASSERT_TRUE(merged.ok()) << merged.status().ToString();
  EXPECT_EQ(merged->checkpoint_storage.host_path, "/srv/ckpt");
  EXPECT_EQ(merged->checkpoint_storage.storage_path, "det");
  EXPECT_EQ(merged->checkpoint_storage.save_trial_best, 3);
  EXPECT_FALSE(none["checkpoint_storage"].IsDefined()) << "the caller's document is left alone";

  const YAML::Node partial = YAML::Load(
      "entrypoint: x\nsearcher: {name: single, metric: x}\n"
      "checkpoint_storage: {storage_path: mine, save_trial_best: 1}\n");
  auto filled = ParseExperimentConfig(WithClusterDefaults(partial, cluster));
  ASSERT_TRUE(filled.ok()) << filled.status().ToString();
  EXPECT_EQ(filled->checkpoint_storage.host_path, "/srv/ckpt");
  EXPECT_EQ(filled->checkpoint_storage.storage_path, "mine");
  EXPECT_EQ(filled->checkpoint_storage.save_trial_best, 1);

  auto own_only = ParseExperimentConfig(WithClusterDefaults(partial, cluster, false));
  ASSERT_FALSE(own_only.ok()) << "the built-in default fills in no field";

  auto refused = ParseExperimentConfig(WithClusterDefaults(none, YAML::Node()));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("checkpoint_storage: is required"), std::string::npos);
}

// What det experiment continue changes: a file's fields merged key by key over the stored config,
// then each --config key.path=value with the value read as YAML.
TEST(DeterminedConfigTest, ContinueOverridesMergeByKeyAndSettingsReadTheirValuesAsYaml) {
  const YAML::Node stored = YAML::Load(
      "searcher: {name: single, metric: x, max_time: 100}\nlabels: [a, b]\nmax_restarts: 2\n");
  const YAML::Node merged =
      WithOverrides(stored, YAML::Load("searcher: {max_time: 300}\nlabels: [c]\n"));
  EXPECT_EQ(merged["searcher"]["name"].as<std::string>(), "single") << "kept";
  EXPECT_EQ(merged["searcher"]["max_time"].as<int>(), 300);
  EXPECT_EQ(merged["labels"].size(), 1u) << "a list is replaced whole";
  EXPECT_EQ(stored["searcher"]["max_time"].as<int>(), 100) << "the stored one is left alone";

  auto set = WithSettings(YAML::Node(), {"searcher.max_time=300", "debug=true", "name=x: y"});
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(YamlToJson(*set),
            nlohmann::json::parse(
                R"({"searcher": {"max_time": 300}, "debug": true, "name": {"x": "y"}})"));
  EXPECT_EQ(WithSettings(YAML::Node(), {"no-equals"}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(WithSettings(YAML::Node(), {".x=1"}).status().code(), StatusCode::kInvalidArgument);
  auto crossing = WithSettings(YAML::Load("max_restarts: 2"), {"max_restarts.x=1"});
  EXPECT_NE(crossing.status().message().find("max_restarts is not a mapping"), std::string::npos)
      << crossing.status().ToString();
}

}  // namespace
}  // namespace det::master::experiment

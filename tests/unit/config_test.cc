#include "common/config.h"

#include <gtest/gtest.h>

#include <map>

#include "agent/agent_config.h"
#include "common/index_ranges.h"
#include "master/master_config.h"

namespace det {
namespace {

YAML::Node Yaml(const std::string& text) { return *ParseYaml(text, "test.yaml"); }

TEST(DurationTest, ParsesGoStyleDurations) {
  EXPECT_EQ(*ParseDuration("500ms"), std::chrono::milliseconds(500));
  EXPECT_EQ(*ParseDuration("25s"), std::chrono::seconds(25));
  EXPECT_EQ(*ParseDuration("5m"), std::chrono::minutes(5));
  EXPECT_EQ(*ParseDuration("1h30m"), std::chrono::minutes(90));
  EXPECT_EQ(*ParseDuration("1.5s"), std::chrono::milliseconds(1500));
  EXPECT_EQ(*ParseDuration("0"), Duration(0));
}

TEST(DurationTest, RefusesMissingOrUnknownUnits) {
  EXPECT_FALSE(ParseDuration("30").ok());
  EXPECT_FALSE(ParseDuration("5 minutes").ok());
  EXPECT_FALSE(ParseDuration("").ok());
  EXPECT_NE(ParseDuration("30").status().message().find("use a number with a unit"),
            std::string::npos);
}

TEST(DurationTest, FormatsShortestForm) {
  EXPECT_EQ(FormatDuration(std::chrono::minutes(5)), "5m");
  EXPECT_EQ(FormatDuration(std::chrono::milliseconds(1500)), "1500ms");
  EXPECT_EQ(FormatDuration(std::chrono::milliseconds(250)), "250ms");
}

TEST(ConfigReaderTest, KeepsDefaultsForAbsentFields) {
  ConfigReader reader(Yaml("{}"));
  int port = 8090;
  reader.ReadPort("port", &port);
  EXPECT_TRUE(reader.Finish().ok());
  EXPECT_EQ(port, 8090);
}

TEST(ConfigReaderTest, ErrorNamesFieldValueAndAllowedValues) {
  ConfigReader reader(Yaml("log: {level: verbose}"));
  std::string level = "info";
  reader.Child("log").ReadOneOf("level", &level, kLogLevels);
  Status status = reader.Finish();
  EXPECT_EQ(status.message(),
            "log.level: \"verbose\" is not allowed; allowed: trace, debug, info, warn, error, "
            "critical, off");
}

TEST(ConfigReaderTest, OutOfRangeAndWrongTypeAreNamed) {
  ConfigReader reader(Yaml("bus: {agent_port: 70000, gateway_port: abc}"));
  int a = 0, g = 0;
  ConfigReader& bus = reader.Child("bus");
  bus.ReadPort("agent_port", &a);
  bus.ReadPort("gateway_port", &g);
  Status status = reader.Finish();
  EXPECT_NE(status.message().find("bus.agent_port: \"70000\" is out of range; allowed: 0..65535"),
            std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("bus.gateway_port: \"abc\" is not an integer"), std::string::npos)
      << status.message();
}

TEST(ConfigReaderTest, UnknownFieldIsAnErrorNotIgnored) {
  ConfigReader reader(Yaml("bus: {agnet_port: 1}"));
  int a = 0;
  reader.Child("bus").ReadPort("agent_port", &a);
  Status status = reader.Finish();
  EXPECT_NE(status.message().find("bus.agnet_port: unknown field"), std::string::npos)
      << status.message();
}

TEST(ConfigReaderTest, SyntaxErrorNamesLine) {
  auto parsed = ParseYaml("a: 1\nb: [\n", "master.yaml");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("master.yaml: YAML syntax error at line"),
            std::string::npos);
}

TEST(MasterConfigTest, DefaultsFollowDetermined) {
  auto config = master::ParseMasterConfig(YAML::Node());
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->bus.channel.reconnect_window, std::chrono::seconds(25));
  EXPECT_EQ(config->bus.channel.heartbeat_interval, std::chrono::seconds(1));
  EXPECT_FALSE(config->bus.security.plaintext);
}

TEST(MasterConfigTest, SilenceLimitMustExceedHeartbeat) {
  auto config =
      master::ParseMasterConfig(Yaml("bus: {heartbeat_interval: 2s, agent_silence_limit: 1s}"));
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("bus.agent_silence_limit: must be longer"),
            std::string::npos);
}

TEST(MasterConfigTest, DbSectionNamesAServerOtherwiseALocalOneIsUsed) {
  auto local = master::ParseMasterConfig(Yaml("local_db: {data_dir: /data/pg}"));
  ASSERT_TRUE(local.ok()) << local.status().ToString();
  EXPECT_FALSE(local->database.db.has_value());
  EXPECT_EQ(local->database.local_data_dir, "/data/pg");
  auto remote = master::ParseMasterConfig(
      Yaml("db: {host: db.internal, port: 6543, name: det, user: u, password: p}"));
  ASSERT_TRUE(remote.ok()) << remote.status().ToString();
  ASSERT_TRUE(remote->database.db.has_value());
  EXPECT_EQ(remote->database.db->Describe(), "postgres://u@db.internal:6543/det");
}

TEST(MasterConfigTest, BadDbFieldsAreNamed) {
  auto config = master::ParseMasterConfig(Yaml("db: {host: '', ssl_mode: sometimes}"));
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("db.host: must not be empty"), std::string::npos);
  EXPECT_NE(config.status().message().find("db.ssl_mode: \"sometimes\" is not allowed"),
            std::string::npos)
      << config.status().message();
}

TEST(MasterConfigTest, TlsNeedsBothFilesAndMovesHttpTo8443) {
  auto plain = master::ParseMasterConfig(YAML::Node());
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->port, 8080);
  EXPECT_FALSE(plain->security.tls());
  auto tls = master::ParseMasterConfig(
      Yaml("security: {initial_user_password: abcdefgh, tls: {cert: /c.pem, key: /k.pem}}"));
  ASSERT_TRUE(tls.ok()) << tls.status().ToString();
  EXPECT_EQ(tls->port, 8443);
  EXPECT_EQ(tls->security.tls_cert, "/c.pem");
  EXPECT_EQ(tls->security.initial_user_password, "abcdefgh");
  auto chosen = master::ParseMasterConfig(Yaml("port: 9443\nsecurity: {tls: {cert: /c, key: /k}}"));
  ASSERT_TRUE(chosen.ok());
  EXPECT_EQ(chosen->port, 9443);
  auto half = master::ParseMasterConfig(Yaml("security: {tls: {cert: /c.pem}}"));
  ASSERT_FALSE(half.ok());
  EXPECT_EQ(half.status().message(),
            "security.tls: give both cert and key (PEM files), or neither");
  auto unknown = master::ParseMasterConfig(Yaml("security: {tls: {certificate: /c.pem}}"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("security.tls.certificate"), std::string::npos)
      << unknown.status().message();
}

// security.default_task: Determined's AgentUserGroup, all four fields.
TEST(MasterConfigTest, DefaultTaskIsAWholeAccount) {
  auto none = master::ParseMasterConfig(YAML::Node());
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->security.default_task.has_value());  // each agent's default_task_user
  EXPECT_FALSE(none->security.allow_root_tasks);
  auto nobody = master::ParseMasterConfig(
      Yaml("security: {default_task: {user: nobody, uid: 65534, group: nogroup, gid: 65534}}"));
  ASSERT_TRUE(nobody.ok()) << nobody.status().ToString();
  ASSERT_TRUE(nobody->security.default_task.has_value());
  EXPECT_EQ(*nobody->security.default_task,
            (bus::AgentUserGroup{65534, 65534, "nobody", "nogroup"}));
  auto partial =
      master::ParseMasterConfig(Yaml("security: {default_task: {user: nobody, uid: 1}}"));
  ASSERT_FALSE(partial.ok());
  EXPECT_NE(partial.status().message().find("security.default_task.gid: is required"),
            std::string::npos)
      << partial.status().message();
  auto negative = master::ParseMasterConfig(
      Yaml("security: {default_task: {user: a, uid: -1, group: b, gid: 2}}"));
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.status().message().find("security.default_task.uid"), std::string::npos)
      << negative.status().message();
}

TEST(MasterConfigTest, RootTasksOnlyWhenAllowed) {
  const std::string root = "default_task: {user: root, uid: 0, group: root, gid: 0}";
  auto refused = master::ParseMasterConfig(Yaml("security: {" + root + "}"));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find(
                "security.default_task.uid: is root's: tasks run as root only with "
                "security.allow_root_tasks: true"),
            std::string::npos)
      << refused.status().message();
  auto root_group = master::ParseMasterConfig(
      Yaml("security: {default_task: {user: op, uid: 1000, group: root, gid: 0}}"));
  ASSERT_FALSE(root_group.ok());
  EXPECT_NE(root_group.status().message().find("security.default_task.gid"), std::string::npos);
  auto allowed =
      master::ParseMasterConfig(Yaml("security: {allow_root_tasks: true, " + root + "}"));
  ASSERT_TRUE(allowed.ok()) << allowed.status().ToString();
  EXPECT_TRUE(allowed->security.allow_root_tasks);
  EXPECT_EQ(allowed->security.default_task->uid, 0);
}

TEST(AgentConfigTest, ReadsDeterminedNames) {
  auto config = agent::ParseAgentConfig(
      Yaml("master_host: m\nmaster_port: 9\nagent_id: a\nagent_reconnect_attempts: 3\n"
           "agent_reconnect_backoff: 2s\nresource_pool: gpu\n"));
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->master_host, "m");
  EXPECT_EQ(config->agent_reconnect_backoff, std::chrono::seconds(2));
  EXPECT_EQ(config->resource_pool, "gpu");
}

// Instances of a cloud all share a hostname: the id they are given on the command line must take
// its default work folder with it, or two agents on one machine adopt each other's workloads.
TEST(AgentConfigTest, TheDefaultWorkFolderFollowsTheAgentIdGivenOnTheCommandLine) {
  auto defaulted = agent::ParseAgentConfig(Yaml("agent_id: vm\n"));
  ASSERT_TRUE(defaulted.ok()) << defaulted.status().ToString();
  EXPECT_EQ(defaulted->work_dir, "/tmp/det-agent/vm");
  agent::OverrideAgentId(&*defaulted, "i-0123");
  EXPECT_EQ(defaulted->agent_id, "i-0123");
  EXPECT_EQ(defaulted->work_dir, "/tmp/det-agent/i-0123");
  auto chosen = agent::ParseAgentConfig(Yaml("agent_id: vm\nwork_dir: /srv/det\n"));
  ASSERT_TRUE(chosen.ok()) << chosen.status().ToString();
  agent::OverrideAgentId(&*chosen, "i-0123");
  EXPECT_EQ(chosen->work_dir, "/srv/det") << "a folder the config chose stays";
}

TEST(SecurityConfigTest, CurveIsRequiredUnlessPlaintextIsExplicit) {
  bus::SecurityConfig config;
  auto resolved = bus::ResolveServerSecurity(config);
  ASSERT_FALSE(resolved.ok());
  EXPECT_NE(resolved.status().message().find("det keygen"), std::string::npos);
  config.plaintext = true;
  EXPECT_TRUE(bus::ResolveServerSecurity(config).ok());
}

}  // namespace
}  // namespace det

namespace det {
namespace {

TEST(MasterConfigTest, ResourcePoolsAreReadAndEachEntryIsChecked) {
  auto doc = ParseYaml(
      "resource_pools:\n  - pool_name: cpu\n  - pool_name: gpu\n"
      "    description: GPUs\n",
      "master.yaml");
  auto config = master::ParseMasterConfig(*doc);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  ASSERT_EQ(config->resources.resource_pools.size(), 2u);
  EXPECT_EQ(config->resources.resource_pools[1].pool_name, "gpu");
  EXPECT_EQ(config->resources.resource_pools[1].description, "GPUs");
  EXPECT_EQ(master::ParseMasterConfig(*ParseYaml("{}", "x"))->resources.resource_pools[0].pool_name,
            "default");

  auto bad = master::ParseMasterConfig(*ParseYaml(
      "resource_pools:\n  - description: no name\n  - pool_name: b\n    size: 3\n", "x"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("resource_pools[0].pool_name: is required"),
            std::string::npos)
      << bad.status().message();
  EXPECT_NE(bad.status().message().find("resource_pools[1].size"), std::string::npos)
      << bad.status().message();
}

TEST(AgentConfigTest, EnvironmentOverridesTheFileAndVisibleGpusTakesBothForms) {
  auto doc = *ParseYaml("master_host: from-file\nvisible_gpus: \"0,GPU-abc\"\n", "agent.yaml");
  agent::ApplyAgentEnvironment(doc, [](const char* name) -> const char* {
    return std::string(name) == "DET_MASTER_HOST" ? "from-env" : nullptr;
  });
  auto config = agent::ParseAgentConfig(doc);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->master_host, "from-env");
  EXPECT_EQ(config->devices.visible_gpus, (std::vector<std::string>{"0", "GPU-abc"}));
  auto list = agent::ParseAgentConfig(*ParseYaml("visible_gpus: [1, 2]\nslot_type: cuda\n", "x"));
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->devices.visible_gpus, (std::vector<std::string>{"1", "2"}));
  auto bad = agent::ParseAgentConfig(*ParseYaml("slot_type: tpu\n", "x"));
  EXPECT_NE(bad.status().message().find("slot_type"), std::string::npos);
}

// The config files' side of what config_yaml_fuzzer found: text that is not UTF-8 and aliases
// inside their own anchors are refused when the file is read, naming the file and the place.
TEST(ConfigReaderTest, ADocumentThatIsNotUtf8OrContainsItselfIsRefused) {
  auto not_utf8 = ParseYaml("cluster_name: caf\xc3\n", "master.yaml");
  ASSERT_FALSE(not_utf8.ok());
  EXPECT_EQ(not_utf8.status().message(), "master.yaml: cluster_name: not UTF-8 text");
  auto cycle = ParseYaml("hooks: &h {on_connection_lost: [*h]}\n", "agent.yaml");
  ASSERT_FALSE(cycle.ok());
  EXPECT_NE(cycle.status().message().find("agent.yaml: hooks.on_connection_lost[0]."),
            std::string::npos)
      << cycle.status().message();
  EXPECT_NE(cycle.status().message().find("nested more than 64 levels deep"), std::string::npos);
  EXPECT_TRUE(ParseYaml("a: &x {b: 1}\nc: *x\n", "x.yaml").ok());
}

}  // namespace
}  // namespace det

namespace det {
namespace {

TEST(IndexRangesTest, ReadsSlurmsForms) {
  EXPECT_EQ(*ParseIndexRanges("1-5", 100), (std::vector<int64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(*ParseIndexRanges("0-15:4", 100), (std::vector<int64_t>{0, 4, 8, 12}));
  EXPECT_EQ(*ParseIndexRanges("1,3,5-7", 100), (std::vector<int64_t>{1, 3, 5, 6, 7}));
  EXPECT_EQ(*ParseIndexRanges("9", 100), (std::vector<int64_t>{9}));
  EXPECT_EQ(ParseIndexRanges("1-10000", 10000)->size(), 10000u);
}

TEST(IndexRangesTest, RefusesWhatIsNotAnIndexListNamingTheItem) {
  for (const char* bad : {"", "1,,2", "a", "-1", "1-", "5-1", "1-3-4", "1-4:0", "1-4:x", "1.5",
                          "1-4%2", "4000001", "99999999999999999999"}) {
    auto parsed = ParseIndexRanges(bad, 100);
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_NE(ParseIndexRanges("1,2,1", 100).status().message().find("given twice"),
            std::string::npos);
  EXPECT_NE(ParseIndexRanges("1-4%2", 100).status().message().find("%LIMIT"), std::string::npos);
  EXPECT_NE(ParseIndexRanges("1-101", 100).status().message().find("more than 100"),
            std::string::npos);
}

// The master.yaml files Determined 0.38.1's `det deploy aws` and `det deploy gcp` write (rendered
// from its templates with the CLI's defaults: tests/data/determined_master_yaml/) start here; what
// this project does not implement is a warning naming each field, and a key Determined does not
// know stays an error.
TEST(MasterConfigTest, DeterminedsDeploymentMasterYamlsLoadWithWarnings) {
  const std::string dir =
      std::string(DET_SOURCE_DIR_DEFAULT) + "/tests/data/determined_master_yaml/";
  const std::map<std::string, std::vector<std::string>> expected = {
      {"aws-simple-rds.yaml",
       {"enable_cors:", "notebook_timeout:", "resource_pools[0].agent_reattach_enabled:",
        "task_container_defaults.image:"}},
      {"gcp.yaml", {"task_container_defaults.bind_mounts:"}}};
  for (const auto& [file, fields] : expected) {
    auto doc = LoadYamlFile(dir + file);
    ASSERT_TRUE(doc.ok()) << doc.status().ToString();
    auto config = master::ParseMasterConfig(*doc);
    ASSERT_TRUE(config.ok()) << file << ": " << config.status().ToString();
    std::string all;
    for (const std::string& w : config->warnings) all += w + "\n";
    for (const std::string& field : fields) {
      EXPECT_NE(all.find(field), std::string::npos) << file << ": " << field << " in\n" << all;
    }
    // det deploy's bucket (S3 on AWS, GCS on GCP) is every experiment's default.
    EXPECT_EQ(config->checkpoint_storage["type"].as<std::string>(""),
              file == "gcp.yaml" ? "gcs" : "s3");
    EXPECT_EQ(config->checkpoint_storage["bucket"].as<std::string>(""), "det-example-checkpoints");
    EXPECT_EQ(all.find("checkpoint_storage"), std::string::npos) << all;
    EXPECT_EQ(config->resources.resource_pools.size(), 2u) << file;
  }
  auto unknown = master::ParseMasterConfig(Yaml("enable_corz: true"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("enable_corz: unknown field"), std::string::npos);
}

TEST(MasterConfigTest, CheckpointStorageDefaultsToDeterminedsAndIsChecked) {
  auto plain = master::ParseMasterConfig(YAML::Node());
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->checkpoint_storage["host_path"].as<std::string>(), "/tmp");
  EXPECT_EQ(plain->checkpoint_storage["storage_path"].as<std::string>(), "determined-checkpoint");
  auto relative = master::ParseMasterConfig(
      Yaml("checkpoint_storage: {type: shared_fs, host_path: relative/dir}"));
  ASSERT_FALSE(relative.ok());
  EXPECT_NE(relative.status().message().find("checkpoint_storage.host_path"), std::string::npos);
}

TEST(MasterConfigTest, RetentionPolicyTakesDeterminedsDaysAndSchedules) {
  auto none = master::ParseMasterConfig(YAML::Node());
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->retention.log_retention_days, -1);
  EXPECT_EQ(none->retention.schedule, "");
  auto cron = master::ParseMasterConfig(
      Yaml("retention_policy: {log_retention_days: 90, schedule: \"0 0 * * *\"}"));
  ASSERT_TRUE(cron.ok()) << cron.status().ToString();
  EXPECT_EQ(cron->retention.log_retention_days, 90);
  EXPECT_TRUE(master::ParseMasterConfig(Yaml("retention_policy: {schedule: 24h}")).ok());
  auto bad = master::ParseMasterConfig(Yaml("retention_policy: {schedule: nightly}"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("retention_policy.schedule"), std::string::npos)
      << bad.status().message();
  EXPECT_FALSE(master::ParseMasterConfig(Yaml("retention_policy: {log_retention_days: -2}")).ok());
}

}  // namespace
}  // namespace det

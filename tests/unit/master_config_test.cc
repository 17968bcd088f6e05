// master.yaml as the master reads it: Determined's defaults and names, and errors that name the
// field.
#include "master/master_config.h"

#include <gtest/gtest.h>

#include <map>

#include "common/config.h"

namespace det {
namespace {

YAML::Node Yaml(const std::string& text) { return *ParseYaml(text, "test.yaml"); }

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

// security.session_lifespan: a week unless set; a lifespan too short to use is refused.
TEST(MasterConfigTest, SessionsLastAWeekUnlessSet) {
  auto none = master::ParseMasterConfig(YAML::Node());
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->security.session_lifespan, std::chrono::hours(24 * 7));
  auto day = master::ParseMasterConfig(Yaml("security: {session_lifespan: 24h}"));
  ASSERT_TRUE(day.ok()) << day.status().ToString();
  EXPECT_EQ(day->security.session_lifespan, std::chrono::hours(24));
  auto brief = master::ParseMasterConfig(Yaml("security: {session_lifespan: 10s}"));
  ASSERT_FALSE(brief.ok());
  EXPECT_NE(brief.status().message().find("session_lifespan"), std::string::npos);
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

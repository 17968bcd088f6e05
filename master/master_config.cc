#include "master/master_config.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <limits>

#include "common/schedule.h"
#include "master/experiments/experiment/experiment_config.h"

namespace det::master {
namespace {

// Determined's AgentUserGroup: all four fields, ids not negative, names not empty.
void ReadDefaultTask(ConfigReader& reader, std::optional<bus::AgentUserGroup>* out) {
  bus::AgentUserGroup account{-1, -1, "", ""};
  reader.ReadInt("uid", &account.uid, 0, std::numeric_limits<int32_t>::max());
  reader.ReadInt("gid", &account.gid, 0, std::numeric_limits<int32_t>::max());
  reader.Read("user", &account.user);
  reader.Read("group", &account.group);
  for (auto [key, missing] : {std::pair{"uid", account.uid < 0},
                              {"gid", account.gid < 0},
                              {"user", account.user.empty()},
                              {"group", account.group.empty()}}) {
    if (missing) reader.Fail(key, "is required (the account's user and group, names and ids)");
  }
  *out = account;
}

void ReadSecurity(ConfigReader& reader, MasterSecurityConfig* security) {
  reader.Read("initial_user_password", &security->initial_user_password);
  reader.Read("allow_root_tasks", &security->allow_root_tasks);
  reader.Read("session_lifespan", &security->session_lifespan);
  if (security->session_lifespan < std::chrono::minutes(1)) {
    reader.Fail("session_lifespan", "must be at least 1m (a login that ends before it is used)");
  }
  if (reader.Has("default_task")) {
    ReadDefaultTask(reader.Child("default_task"), &security->default_task);
    const auto& task = *security->default_task;
    if ((task.uid == 0 || task.gid == 0) && !security->allow_root_tasks) {
      reader.Child("default_task")
          .Fail(task.uid == 0 ? "uid" : "gid",
                "is root's: tasks run as root only with "
                "security.allow_root_tasks: true");
    }
  }
  reader.Ignore({"ssh", "authz", "token"}, "");
  ConfigReader& tls = reader.Child("tls");
  tls.Read("cert", &security->tls_cert);
  tls.Read("key", &security->tls_key);
}

// TLS needs both files; with it, HTTP moves to Determined's TLS port unless `port` is given.
Status CheckTls(const ConfigReader& reader, MasterConfig* config) {
  const MasterSecurityConfig& security = config->security;
  if (security.tls_cert.empty() != security.tls_key.empty()) {
    return InvalidArgument("security.tls: give both cert and key (PEM files), or neither");
  }
  if (security.tls() && !reader.Has("port")) config->port = 8443;
  return Status::Ok();
}

void ReadBus(ConfigReader& reader, MasterBusConfig* bus) {
  reader.Read("host", &bus->host);
  reader.ReadPort("gateway_port", &bus->gateway_port);
  reader.ReadPort("agent_port", &bus->agent_port);
  reader.ReadPort("event_subscribe_port", &bus->event_subscribe_port);
  reader.ReadPort("event_publish_port", &bus->event_publish_port);
  reader.ReadPort("snapshot_port", &bus->snapshot_port);
  reader.Read("heartbeat_interval", &bus->channel.heartbeat_interval);
  reader.Read("agent_silence_limit", &bus->channel.silence_limit);
  reader.Read("agent_reconnect_wait", &bus->channel.reconnect_window);
  reader.Read("resend_after", &bus->channel.resend_after);
  reader.ReadInt("max_message_bytes", &bus->max_message_bytes, 1024, int64_t{1} << 31);
  bus->security.Read(reader.Child("security"));
  if (bus->channel.silence_limit <= bus->channel.heartbeat_interval) {
    reader.Fail("agent_silence_limit", "must be longer than heartbeat_interval (" +
                                           FormatDuration(bus->channel.heartbeat_interval) + ")");
  }
}

}  // namespace

std::string DefaultLocalDataDir() {
  if (::geteuid() == 0) return "/var/lib/det/postgres";
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) {
    return std::string(xdg) + "/det/postgres";
  }
  const char* home = std::getenv("HOME");
  return std::string(home ? home : ".") + "/.local/share/det/postgres";
}

std::string DefaultWebUiDir() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path bin = fs::read_symlink("/proc/self/exe", ec).parent_path();
  for (const fs::path& dir :
       {bin.parent_path() / "webui" / "dist", bin.parent_path() / "share" / "det" / "webui"}) {
    if (fs::exists(dir / "index.html", ec)) return dir.string();
  }
  return "";
}

namespace {

// `http:` (master/front/http/server.h): timeouts as durations, caps as counts.
void ReadHttp(ConfigReader& reader, http::ServerLimits* limits) {
  reader.Read("header_timeout", &limits->header_timeout);
  reader.Read("body_timeout", &limits->body_timeout);
  reader.Read("idle_timeout", &limits->idle_timeout);
  reader.Read("write_timeout", &limits->write_timeout);
  reader.ReadInt("max_connections", &limits->max_connections, 1, 1'000'000);
  reader.ReadInt("max_connections_per_peer", &limits->max_connections_per_peer, 1, 1'000'000);
  reader.ReadInt("workers", &limits->workers, 1, 1024);
  reader.ReadInt("max_waiting", &limits->max_waiting, 1, 1'000'000);
  reader.ReadInt("max_parked", &limits->max_parked, 1, 1'000'000);
}

// `checkpoint_storage:` checked as an experiment's would be; Determined's packaged default
// (shared_fs under /tmp) when absent.
void ReadDefaultCheckpointStorage(ConfigReader& reader, MasterConfig* config) {
  config->checkpoint_storage = YAML::Load(
      "{type: shared_fs, host_path: /tmp, storage_path: determined-checkpoint, "
      "save_experiment_best: 0, save_trial_best: 1, save_trial_latest: 1}");
  if (!reader.Has("checkpoint_storage")) return;
  const YAML::Node given = reader.Raw("checkpoint_storage");
  const std::string type = given.IsMap() ? given["type"].as<std::string>("") : "";
  if (type == "azure" || type == "directory") {
    config->checkpoint_storage = YAML::Node();
    reader.Warn("checkpoint_storage", "type " + type +
                                          " is not implemented yet; each experiment must name "
                                          "a checkpoint_storage of its own (shared_fs, s3 or gcs)");
    return;
  }
  config->checkpoint_storage_given = true;
  experiment::CheckpointStorage checked;
  experiment::ReadCheckpointStorage(reader.Child("checkpoint_storage"), &checked);
  config->checkpoint_storage = given;
}

void ReadRetention(ConfigReader& reader, LogRetentionConfig* retention) {
  reader.ReadInt("log_retention_days", &retention->log_retention_days, -1, 32767);
  reader.Read("schedule", &retention->schedule);
  if (retention->schedule.empty()) return;
  if (Result<Schedule> schedule = Schedule::Parse(retention->schedule); !schedule.ok()) {
    reader.Fail("schedule", schedule.status().message());
  }
}

// Determined's master.yaml fields this project does not implement: accepted with a warning.
void IgnoreDeterminedOnlyFields(ConfigReader& reader) {
  reader.Ignore({"tensorboard_timeout", "notebook_timeout"}, "no notebooks or TensorBoards here");
  reader.Ignore({"enable_cors"}, "the WebUI is served by the master itself");
  reader.Ignore({"telemetry", "observability"}, "/metrics is always on");
  reader.Ignore({"launch_error", "ui_customization", "logging", "cache", "webhooks",
                 "feature_switches", "reserved_ports", "__internal", "scim", "saml", "oidc",
                 "det_cloud", "integrations", "root", "additional_resource_managers"},
                "");
}

}  // namespace

Result<MasterConfig> ParseMasterConfig(const YAML::Node& doc) {
  MasterConfig config;
  ConfigReader reader(doc);
  if (reader.Has("db")) {
    config.database.db.emplace();
    config.database.db->Read(reader.Child("db"));
  }
  config.database.local_data_dir = DefaultLocalDataDir();
  reader.Child("local_db").Read("data_dir", &config.database.local_data_dir);
  reader.Read("cluster_name", &config.cluster_name);
  reader.Read("endpoints_file", &config.endpoints_file);
  config.webui_dir = DefaultWebUiDir();
  reader.Read("webui_dir", &config.webui_dir);
  reader.ReadPort("port", &config.port);
  ReadLogConfig(reader.Child("log"), &config.log);
  ReadBus(reader.Child("bus"), &config.bus);
  ReadSecurity(reader.Child("security"), &config.security);
  ReadHttp(reader.Child("http"), &config.http);
  ReadResourcesConfig(reader, &config.resources);
  ReadDefaultCheckpointStorage(reader, &config);
  ReadRetention(reader.Child("retention_policy"), &config.retention);
  IgnoreDeterminedOnlyFields(reader);
  DET_RETURN_IF_ERROR(reader.Finish());
  config.warnings = reader.warnings();
  DET_RETURN_IF_ERROR(CheckTls(reader, &config));
  return config;
}

}  // namespace det::master

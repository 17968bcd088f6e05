#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bus/agent_channel.h"
#include "bus/catalog/workload.h"
#include "bus/security.h"
#include "common/config.h"
#include "common/logging.h"
#include "master/cluster/resource_config.h"
#include "master/front/http/server.h"
#include "master/records/log_retention.h"
#include "storage/db_config.h"

namespace det::master {

// `bus:` in master.yaml: where the master's bus sockets listen. Port 0 picks a free port (the
// actual endpoints are written to `endpoints_file` when set).
struct MasterBusConfig {
  std::string host = "0.0.0.0";
  int gateway_port = 8090;          // det CLI (REQ/REP)
  int agent_port = 8091;            // agents (ROUTER/DEALER); agents' `master_port`
  int event_subscribe_port = 8092;  // event bus subscribers (XPUB)
  int event_publish_port = 8093;    // event bus publishers (XSUB)
  int snapshot_port = 8094;         // event bus snapshots (ROUTER)
  bus::AgentChannelConfig channel;  // heartbeat_interval (1s), agent_silence_limit (5s),
                                    // agent_reconnect_wait (25s), resend_after (5s)
  bus::SecurityConfig security;
  int64_t max_message_bytes = 128 << 20;  // largest frame accepted (ZMQ_MAXMSGSIZE)
};

// Where the master's data lives: `db:` names a PostgreSQL server; without it the master runs a
// private one (storage::LocalPostgres) in `local_db.data_dir`.
struct MasterDbConfig {
  std::optional<storage::DbConfig> db;  // `db:`; unset: use the local server
  std::string local_data_dir;           // `local_db.data_dir`; default DefaultLocalDataDir()
};

// /var/lib/det/postgres as root (the server then runs as `postgres`, which must reach it),
// else $XDG_DATA_HOME/det/postgres or ~/.local/share/det/postgres.
std::string DefaultLocalDataDir();

// `security:` in master.yaml: users (the REST and CLI gateways' logins) and TLS for HTTP.
struct MasterSecurityConfig {
  // The `admin` user's password at the first start; empty: one is generated and printed once.
  std::string initial_user_password;
  // `tls.cert` / `tls.key`: PEM files. With both, the REST API and Core API speak HTTPS (on port
  // 8443 unless `port` says otherwise) and trial runs get the certificate to trust.
  std::string tls_cert;
  std::string tls_key;
  bool tls() const { return !tls_cert.empty(); }
  // `default_task: {user, uid, group, gid}`: the account on agents that the tasks of users not
  // linked to one (`det user link-with-agent-user`) run as. Unset: each agent's default_task_user
  // (`nobody` unless its agent.yaml says otherwise; an agent not root runs tasks as itself).
  std::optional<bus::AgentUserGroup> default_task;
  // Whether tasks may run as root (uid or gid 0) on agents: a default_task or a user's link to
  // root is refused without it. Determined ran every task as root; this is how to keep that.
  bool allow_root_tasks = false;
  // How long a login session lasts (`det user login`, the WebUI's, the SDK's); a week unless set.
  // det, given a session that has ended, says so and asks to log in again.
  Duration session_lifespan = std::chrono::hours(24 * 7);
};

struct MasterConfig {
  std::string cluster_name = "default";
  int port = 8080;            // HTTP: the Core API (and REST) on bus.host, as Determined's `port`
  ResourcesConfig resources;  // resource_manager, resource_pools, task_container_defaults
  MasterDbConfig database;
  MasterBusConfig bus;
  MasterSecurityConfig security;
  LogConfig log;
  std::string endpoints_file;  // where to write the bound endpoints (YAML); empty: nowhere
  // The WebUI's built files, served at `/` (DefaultWebUiDir() unless given; "" if none).
  std::string webui_dir;
  // `http:` the HTTP server's timeouts and caps (master/front/http/server.h; every field optional).
  http::ServerLimits http;
  // `checkpoint_storage:` every experiment's default, merged into it as Determined merges it
  // (experiment::WithClusterDefaults); Determined's own default when master.yaml has none. Null
  // when master.yaml names a kind not implemented yet (then experiments must name their own).
  YAML::Node checkpoint_storage;
  bool checkpoint_storage_given = false;  // master.yaml set it (not the built-in default)
  LogRetentionConfig retention;
  // Fields accepted but not acted on (Determined's that this project lacks), each naming its
  // field: logged at start and printed by `det-master check-config`.
  std::vector<std::string> warnings;
};

// Where the WebUI's files are when master.yaml does not say: the build tree's webui/dist beside
// det-master's folder, else an installation's share/det/webui; "" when neither has index.html.
std::string DefaultWebUiDir();

// Reads master.yaml's text. Unknown fields and bad values are errors naming the field; the
// fields of Determined's master.yaml this project does not implement are warnings.
Result<MasterConfig> ParseMasterConfig(const YAML::Node& doc);

}  // namespace det::master

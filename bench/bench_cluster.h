#pragma once

// What the process-level benchmarks share: a private PostgreSQL and a real det-master (and
// det-agents) started from the build folder, stopped and removed at the end.

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/processes.h"
#include "bus/catalog/master.h"
#include "bus/catalog/users.h"
#include "bus/rpc_client.h"
#include "common/config.h"
#include "common/process.h"
#include "storage/local_postgres.h"

extern char** environ;

namespace det::bench {

namespace fs = std::filesystem;

// DET_BUILD_DIR, or the parent of the folder holding this benchmark.
inline std::string BuildDir(const char* argv0) {
  if (const char* dir = std::getenv("DET_BUILD_DIR")) return dir;
  return fs::absolute(argv0).parent_path().parent_path().string();
}

// A det-master on loopback (all ports picked by the OS) over a private PostgreSQL; plaintext, or
// with CURVE on every port as `det deploy local` runs it (keys made in its folder: master, agent,
// cli).
class BenchCluster {
 public:
  static constexpr const char* kAdminPassword = "bench-admin-password";
  enum class Security { kPlaintext, kCurve };

  BenchCluster(std::string build, std::string extra_bus_config = "",
               Security security = Security::kPlaintext)
      : build_(std::move(build)),
        dir_(fs::temp_directory_path() / ("det-bench-" + bus::RandomId())),
        extra_bus_config_(std::move(extra_bus_config)),
        curve_(security == Security::kCurve) {
    fs::create_directories(dir_);
    // As /tmp is: a root agent's tasks (as `nobody`, its default_task_user) may write here.
    fs::permissions(dir_, fs::perms(01777));
  }
  ~BenchCluster() {
    for (auto it = pids_.rbegin(); it != pids_.rend(); ++it) Terminate(*it);
    // Workloads outlive their agents by design; a benchmark's must not outlive the benchmark.
    StopProcessGroups(ProcessGroupsLedBy(kWorkloadShimProgram, dir_.string()),
                      std::chrono::milliseconds(0));
    pg_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  Status StartMaster() {
    if (curve_) DET_RETURN_IF_ERROR(WriteKeys());
    DET_ASSIGN_OR_RETURN(pg_, storage::LocalPostgres::Start({(dir_ / "pg").string()}));
    const auto& db = pg_->db();
    std::ofstream(dir_ / "master.yaml")
        << "db:\n  host: " << db.host << "\n  port: " << db.port << "\n  name: " << db.name
        << "\n  user: " << db.user << "\n  password: " << db.password
        << "\nport: 0\nbus:\n  host: 127.0.0.1\n  gateway_port: 0\n  agent_port: 0\n"
           "  event_subscribe_port: 0\n  event_publish_port: 0\n  snapshot_port: 0\n"
        << (curve_ ? "  security: {key_file: " + (dir_ / "master.key").string() +
                         ", allowed_clients_file: " + (dir_ / "allowed_clients").string() + "}\n"
                   : std::string("  security: {plaintext: true}\n"))
        << extra_bus_config_
        << "log: {level: warn}\nsecurity: {initial_user_password: " << kAdminPassword << "}\n"
        << extra_config_;
    master_pid_ = Spawn({build_ + "/master/det-master", "-c", (dir_ / "master.yaml").string(),
                         "--endpoints-file", (dir_ / "endpoints.yaml").string()},
                        dir_ / "master.log");
    pids_.push_back(master_pid_);
    for (int i = 0; i < 200 && !fs::exists(dir_ / "endpoints.yaml"); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    auto endpoints = LoadYamlFile((dir_ / "endpoints.yaml").string());
    if (!endpoints.ok()) {
      return Unavailable("master did not start; see " + (dir_ / "master.log").string());
    }
    endpoints_ = *endpoints;
    return LogInAsAdmin();
  }

  // Starts an agent (`extra_yaml`: more of its agent.yaml); its pid.
  pid_t StartAgent(const std::string& id, int slots, const std::string& extra_yaml = "") {
    const fs::path config = dir_ / ("agent-" + id + ".yaml");
    std::ofstream(config) << (curve_ ? "security: {key_file: " + (dir_ / "agent.key").string() +
                                           ", server_public_key_file: " +
                                           (dir_ / "master.pub").string() + "}\n"
                                     : std::string("security: {plaintext: true}\n"))
                          << extra_yaml;
    pids_.push_back(Spawn({build_ + "/agent/det-agent", "-c", config.string(), "--master-port",
                           std::to_string(agent_port()), "--agent-id", id, "--artificial-slots",
                           std::to_string(slots), "--work-dir", (dir_ / ("work-" + id)).string(),
                           "--log-level", "warn"},
                          dir_ / "agents.log"));
    return pids_.back();
  }

  // Extra top-level master.yaml sections (before StartMaster).
  void AddConfig(const std::string& yaml) { extra_config_ += yaml; }

  // How a gateway client of this cluster connects (the cli key under CURVE).
  bus::SocketSecurity client_security() const { return client_security_; }
  // The environment that points a `det` process at this cluster as the admin.
  std::vector<std::string> DetEnvironment() const {
    const std::string gateway = endpoint("gateway");
    std::vector<std::string> env = {"DET_MASTER=" + gateway, "DET_USER_TOKEN=" + admin_token_,
                                    "DET_AUTH_FILE=" + (dir_ / "auth.json").string(),
                                    "HOME=" + dir_.string()};
    if (curve_) {
      env.push_back("DET_KEY_FILE=" + (dir_ / "cli.key").string());
      env.push_back("DET_MASTER_KEY_FILE=" + (dir_ / "master.pub").string());
    } else {
      env.push_back("DET_PLAINTEXT=1");
    }
    return env;
  }

  std::string endpoint(const std::string& name) const { return endpoints_[name].as<std::string>(); }
  // Waits (up to `limit`) until `n` agents are listed; how many were.
  size_t WaitForAgents(bus::RpcClient& client, const std::string& token, size_t n,
                       std::chrono::seconds limit) const {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    size_t joined = 0;
    while (true) {
      auto list = client.Call<bus::AgentListRequest, bus::AgentList>({}, token);
      joined = list.ok() ? list->agents.size() : 0;
      if (joined >= n || std::chrono::steady_clock::now() >= deadline) return joined;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  // A session token of the admin user (StartMaster logs in), for a benchmark's gateway calls.
  const std::string& admin_token() const { return admin_token_; }
  int agent_port() const {
    const std::string agent = endpoint("agent");
    return std::stoi(agent.substr(agent.rfind(':') + 1));
  }
  pid_t master_pid() const { return master_pid_; }
  // The private PostgreSQL (after StartMaster).
  const storage::DbConfig& db() const { return pg_->db(); }
  const fs::path& dir() const { return dir_; }
  // The build tree whose binaries it runs.
  const std::string& build() const { return build_; }

 private:
  Status WriteKeys() {
    std::ofstream allowed(dir_ / "allowed_clients");
    for (const char* name : {"master", "agent", "cli"}) {
      DET_ASSIGN_OR_RETURN(bus::CurveKeyPair keys, bus::GenerateCurveKeyPair());
      DET_RETURN_IF_ERROR(bus::WriteKeyPairFiles(keys, (dir_ / name).string()));
      if (std::string(name) == "master") {
        master_public_key_ = keys.public_key;
      } else {
        allowed << keys.public_key << " " << name << "\n";
      }
      if (std::string(name) == "cli") client_keys_ = keys;
    }
    client_security_ = {
        bus::SocketSecurity::Mode::kCurveClient, client_keys_, master_public_key_, {}};
    return Status::Ok();
  }

  Status LogInAsAdmin() {
    zmq::context_t context;
    bus::RpcClient client(context, endpoint("gateway"), client_security_,
                          bus::RpcClientConfig{.timeout = std::chrono::seconds(10)});
    auto reply = client.Call<bus::UserLoginRequest, bus::UserLoginReply>({"admin", kAdminPassword});
    if (!reply.ok()) return reply.status().WithContext("login as admin");
    admin_token_ = reply->token;
    return Status::Ok();
  }

  std::string build_;
  fs::path dir_;
  std::string extra_bus_config_;
  std::string extra_config_;
  bool curve_ = false;
  bus::CurveKeyPair client_keys_;
  std::string master_public_key_;
  bus::SocketSecurity client_security_;
  std::unique_ptr<storage::LocalPostgres> pg_;
  YAML::Node endpoints_;
  pid_t master_pid_ = -1;
  std::string admin_token_;
  std::vector<pid_t> pids_;
};

}  // namespace det::bench

#include "cli/deploy_local.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "bus/catalog/master.h"
#include "bus/security.h"
#include "cli/agent_commands.h"
#include "cli/credentials.h"
#include "cli/master_trust.h"
#include "cli/rpc_call.h"
#include "common/process.h"

namespace det::cli {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

struct DeployOptions {
  std::string dir;
  int agents = 0;
  int artificial_slots = 0;  // 0: discover devices
  // > 0: the autoscaler starts agents on demand, up to this many. Unset (-1): 4 unless static
  // agents were asked for (--agents), then none.
  int max_agents = -1;
  bool delete_data = false;
};

// Slots of each agent the autoscaler starts: they share this host, so they report fake slots.
int DynamicAgentSlots(const DeployOptions& deploy) {
  return deploy.artificial_slots > 0 ? deploy.artificial_slots : 2;
}

// The cluster's fixed local ports: det's defaults, so that `det` needs no -m.
constexpr int kRestPort = 8080;
constexpr int kGatewayPort = 8090;

// As root, a system folder: the agents run tasks as `nobody`, who must pass through to the work
// folders, and root's home (0700) would keep them out.
std::string DefaultDir() {
  if (::geteuid() == 0) return "/var/lib/det/local";
  const char* data = std::getenv("XDG_DATA_HOME");
  if (data && *data) return std::string(data) + "/det/local";
  const char* home = std::getenv("HOME");
  return std::string(home ? home : ".") + "/.local/share/det/local";
}

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool Alive(pid_t pid) { return ProcessRunning(pid); }

pid_t PidOf(const fs::path& dir, const std::string& name) {
  const std::string text = ReadText(dir / "pids" / (name + ".pid"));
  return text.empty() ? -1 : static_cast<pid_t>(std::atol(text.c_str()));
}

// Starts `argv` in the background in its own session, output to <dir>/logs/<name>.log; records
// its pid in <dir>/pids/<name>.pid.
Result<pid_t> Launch(const fs::path& dir, const std::string& name, std::vector<std::string> argv) {
  if (!fs::exists(argv[0])) return NotFound(argv[0] + " not found (set DET_BIN_DIR)");
  DET_ASSIGN_OR_RETURN(pid_t pid,
                       SpawnDetached(argv, {}, (dir / "logs" / (name + ".log")).string()));
  std::ofstream(dir / "pids" / (name + ".pid")) << pid << "\n";
  return pid;
}

// Keys and the admin password, made once per cluster folder.
// As root, the agents run tasks as other accounts (default_task_user), which must pass through
// every folder above the cluster's to reach their own work folders.
Status CheckReachableByTasks(const fs::path& dir) {
  if (::geteuid() != 0) return Status::Ok();
  for (fs::path at = dir.parent_path(); !at.empty(); at = at.parent_path()) {
    struct stat st {};
    if (::stat(at.c_str(), &st) == 0 && (st.st_mode & S_IXOTH) == 0) {
      char mode[8];
      std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
      return FailedPrecondition("tasks run as other accounts (nobody) and cannot reach " +
                                dir.string() + ": " + at.string() + " is mode " + mode +
                                "; choose a --cluster-dir others may pass through (the default " +
                                DefaultDir() + ", or under /tmp)");
    }
    if (at == at.root_path()) break;
  }
  return Status::Ok();
}

Status PrepareSecrets(const fs::path& dir) {
  for (const char* name : {"master", "agent", "autoscaler", "cli"}) {
    if (fs::exists(dir / "keys" / (std::string(name) + ".key"))) continue;
    DET_ASSIGN_OR_RETURN(bus::CurveKeyPair keys, bus::GenerateCurveKeyPair());
    DET_RETURN_IF_ERROR(bus::WriteKeyPairFiles(keys, (dir / "keys" / name).string()));
  }
  // Each key on the ports of its role only (a CLI key cannot join as an agent, say).
  std::ofstream allowed(dir / "keys" / "allowed_clients");
  for (const char* role : {bus::kRoleAgent, bus::kRoleAutoscaler, bus::kRoleCli}) {
    DET_ASSIGN_OR_RETURN(bus::CurveKeyPair keys,
                         bus::ReadKeyFile((dir / "keys" / (std::string(role) + ".pub")).string()));
    allowed << keys.public_key << " " << role << "\n";
  }
  if (!fs::exists(dir / "admin-password")) {
    DET_ASSIGN_OR_RETURN(bus::CurveKeyPair random, bus::GenerateCurveKeyPair());
    std::string password = random.secret_key.substr(0, 20);
    for (char& c : password) {
      if (!std::isalnum(static_cast<unsigned char>(c))) c = 'x';
    }
    const int fd = ::open((dir / "admin-password").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return InvalidArgument("cannot write " + (dir / "admin-password").string());
    const bool written =
        ::write(fd, password.data(), password.size()) == static_cast<ssize_t>(password.size());
    ::close(fd);
    if (!written) return InvalidArgument("cannot write " + (dir / "admin-password").string());
  }
  return Status::Ok();
}

std::string ClientSecurity(const fs::path& dir, const std::string& name) {
  return "security:\n  key_file: " + (dir / "keys" / (name + ".key")).string() +
         "\n  server_public_key_file: " + (dir / "keys" / "master.pub").string() + "\n";
}

// A configuration file that is the owner's only from the moment it exists (0600): they name key
// files, and the master's holds the admin password. An agent as root would otherwise close its own
// at start, as tasks of other accounts run on its host.
std::ofstream PrivateFile(const fs::path& path) {
  ::close(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600));
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write);
  return std::ofstream(path);
}

// The default pool grows by det-agent processes on this host (the autoscaler's local provider),
// each with its slots and the agents' key from dynamic-agent.yaml.
void WriteLocalProvider(const fs::path& dir, const DeployOptions& deploy) {
  std::ofstream(dir / "master.yaml", std::ios::app)
      << "resource_pools:\n  - pool_name: default\n    provider:\n      type: local\n"
      << "      max_instances: " << deploy.max_agents
      << "\n      instance_slots: " << DynamicAgentSlots(deploy) << "\n      agent_args: [-c, \""
      << (dir / "dynamic-agent.yaml").string() << "\"]"
      << "\n      work_dir: \"" << (dir / "instances").string() << "\"\n";
  PrivateFile(dir / "dynamic-agent.yaml")
      << "master_host: 127.0.0.1\nartificial_slots: " << DynamicAgentSlots(deploy) << "\n"
      << ClientSecurity(dir, "agent");
}

void WriteConfigs(const fs::path& dir, const DeployOptions& deploy, const std::string& password) {
  PrivateFile(dir / "master.yaml")
      << "port: " << kRestPort << "\nendpoints_file: " << (dir / "endpoints.yaml").string()
      << "\nlocal_db:\n  data_dir: " << (dir / "postgres").string()
      << "\nsecurity:\n  initial_user_password: \"" << password << "\"\nbus:\n  host: 127.0.0.1\n"
      << "  gateway_port: " << kGatewayPort
      << "\n  security:\n    key_file: " << (dir / "keys" / "master.key").string()
      << "\n    allowed_clients_file: " << (dir / "keys" / "allowed_clients").string()
      << "\ncheckpoint_storage:\n  type: shared_fs\n  host_path: " << (dir / "checkpoints").string()
      << "\n";
  std::error_code ignored;
  fs::create_directories(dir / "checkpoints", ignored);
  if (deploy.max_agents > 0) WriteLocalProvider(dir, deploy);
  for (int i = 0; i < deploy.agents; ++i) {
    const std::string id = "local-agent-" + std::to_string(i);
    std::ofstream out = PrivateFile(dir / (id + ".yaml"));
    out << "master_host: 127.0.0.1\nagent_id: " << id
        << "\nwork_dir: " << (dir / "work" / id).string() << "\n"
        << ClientSecurity(dir, "agent");
    if (deploy.artificial_slots > 0) out << "artificial_slots: " << deploy.artificial_slots << "\n";
  }
  PrivateFile(dir / "autoscaler.yaml") << "master_host: 127.0.0.1\n"
                                       << ClientSecurity(dir, "autoscaler");
}

// How this det reaches the deployed cluster, as admin.
CliOptions ClusterOptions(const CliOptions& base, const fs::path& dir) {
  CliOptions options = base;
  options.master = "tcp://127.0.0.1:" + std::to_string(kGatewayPort);
  options.security = {};
  options.security.key_file = (dir / "keys" / "cli.key").string();
  options.security.server_public_key_file = (dir / "keys" / "master.pub").string();
  options.user = "admin";
  options.password = ReadText(dir / "admin-password");
  options.token.clear();
  return options;
}

int ShowStatus(const CliOptions& base, const DeployOptions& deploy);

int Up(const CliOptions& base, DeployOptions deploy) {
  if (deploy.max_agents < 0) deploy.max_agents = deploy.agents > 0 ? 0 : 4;
  const fs::path dir = fs::absolute(deploy.dir);
  if (Alive(PidOf(dir, "master"))) {
    std::cerr << "a local cluster already runs from " << dir.string() << "\n";
    return ShowStatus(base, deploy);
  }
  if (Status reachable = CheckReachableByTasks(dir); !reachable.ok()) return Fail(reachable);
  for (const char* sub : {"keys", "pids", "logs", "work"}) fs::create_directories(dir / sub);
  fs::permissions(dir, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  // Tasks of other accounts on this host read neither the keys nor the components' logs.
  for (const char* sub : {"keys", "logs"}) fs::permissions(dir / sub, fs::perms::owner_all);
  if (Status prepared = PrepareSecrets(dir); !prepared.ok()) return Fail(prepared);
  const std::string password = ReadText(dir / "admin-password");
  WriteConfigs(dir, deploy, password);
  fs::remove(dir / "endpoints.yaml");
  auto master =
      Launch(dir, "master",
             {SiblingProgram("master", "det-master"), "-c", (dir / "master.yaml").string()});
  if (!master.ok()) return Fail(master.status());
  for (int i = 0; i < 600 && !fs::exists(dir / "endpoints.yaml"); ++i) {
    if (!Alive(*master)) break;
    std::this_thread::sleep_for(100ms);
  }
  if (!fs::exists(dir / "endpoints.yaml")) {
    std::cerr << ReadText(dir / "logs" / "master.log");
    return Fail(Unavailable("det-master did not start; its log is " +
                            (dir / "logs" / "master.log").string()));
  }
  for (int i = 0; i < deploy.agents; ++i) {
    const std::string id = "local-agent-" + std::to_string(i);
    auto agent = Launch(
        dir, id, {SiblingProgram("agent", "det-agent"), "-c", (dir / (id + ".yaml")).string()});
    if (!agent.ok()) return Fail(agent.status());
  }
  auto autoscaler = Launch(
      dir, "autoscaler",
      {SiblingProgram("autoscaler", "det-autoscaler"), "-c", (dir / "autoscaler.yaml").string()});
  if (!autoscaler.ok()) return Fail(autoscaler.status());

  const CliOptions options = ClusterOptions(base, dir);
  size_t joined = 0;
  for (int i = 0; i < 300 && joined < static_cast<size_t>(deploy.agents); ++i) {
    auto agents = Call<bus::AgentListRequest, bus::AgentList>(options, {});
    joined = agents.ok() ? agents->agents.size() : 0;
    if (joined < static_cast<size_t>(deploy.agents)) std::this_thread::sleep_for(100ms);
  }
  if (joined < static_cast<size_t>(deploy.agents)) {
    return Fail(Unavailable("only " + std::to_string(joined) + " of " +
                            std::to_string(deploy.agents) + " agents joined; see " +
                            (dir / "logs").string()));
  }
  // This det made the master's keys: whoever uses det here trusts them from the start (a
  // cluster deployed again with new keys replaces the old one's).
  const std::string url = "http://127.0.0.1:" + std::to_string(kRestPort);
  auto master_key = bus::ReadKeyFile((dir / "keys" / "master.pub").string());
  if (Status trusted =
          master_key.ok() ? KnownMasters().Trust(url, master_key->public_key) : master_key.status();
      !trusted.ok()) {
    std::cerr << "warning: det will ask to trust the master's key at first use: "
              << trusted.message() << "\n";
  }
  std::cout << "local cluster up in " << dir.string() << " (" << deploy.agents << " agent"
            << (deploy.agents == 1 ? "" : "s") << ")\n"
            << "  REST API and WebUI: " << url << "\n"
            << "  admin user:         admin / " << password << "\n"
            << "  det needs:          export DET_MASTER=" << url << "\n"
            << "                      det user login admin\n"
            << "  stop it:            det deploy local down\n";
  if (deploy.max_agents > 0) {
    std::cout << "  autoscaling:        up to " << deploy.max_agents << " more agent"
              << (deploy.max_agents == 1 ? "" : "s") << " of " << DynamicAgentSlots(deploy)
              << " slots as work waits (det autoscaler instances|decisions)\n";
  }
  return 0;
}

// SIGTERM, then SIGKILL after 15 s; also reaps a child of this process.
void StopProcess(const fs::path& dir, const std::string& name) {
  const pid_t pid = PidOf(dir, name);
  fs::remove(dir / "pids" / (name + ".pid"));
  if (!Alive(pid)) return;
  kill(pid, SIGTERM);
  for (int i = 0; i < 150 && Alive(pid); ++i) {
    waitpid(pid, nullptr, WNOHANG);
    std::this_thread::sleep_for(100ms);
  }
  if (Alive(pid)) kill(pid, SIGKILL);
  std::cout << "stopped " << name << " (pid " << pid << ")\n";
}

// The agents the autoscaler started (tagged with their folder, dir/instances).
void StopDynamicAgents(const fs::path& dir) {
  const std::vector<TaggedProcess> agents =
      FindSessionLeaders("DET_LOCAL_PROVIDER_DIR", (dir / "instances").string());
  for (const TaggedProcess& agent : agents) kill(-agent.pid, SIGTERM);
  for (int i = 0; i < 150; ++i) {
    if (FindSessionLeaders("DET_LOCAL_PROVIDER_DIR", (dir / "instances").string()).empty()) break;
    std::this_thread::sleep_for(100ms);
  }
  for (const TaggedProcess& agent : agents) {
    if (Alive(agent.pid)) kill(-agent.pid, SIGKILL);
    auto id = agent.env.find("DET_INSTANCE_ID");
    std::cout << "stopped " << (id == agent.env.end() ? "an agent" : id->second) << " (pid "
              << agent.pid << ")\n";
  }
}

// What the cluster's agents still run: workloads outlive their agent by design (a restarted agent
// adopts them), but not the cluster.
void StopWorkloads(const fs::path& dir) {
  const std::vector<pid_t> workloads = ProcessGroupsLedBy(kWorkloadShimProgram, dir.string());
  if (workloads.empty()) return;
  StopProcessGroups(workloads, 10s);
  std::cout << "stopped " << workloads.size() << " workload" << (workloads.size() == 1 ? "" : "s")
            << "\n";
}

// The private PostgreSQL keeps its server files outside the cluster folder when its `postgres`
// account cannot reach that folder (storage/local_postgres.h): `server_dir` names them. Removed
// only when they look like a PostgreSQL server's folder.
void RemoveDatabaseServerFiles(const fs::path& data_dir) {
  const std::string server_dir = ReadText(data_dir / "server_dir");
  const fs::path server = server_dir.substr(0, server_dir.find_last_not_of("\n ") + 1);
  if (server.empty() || !server.is_absolute() || !fs::exists(server / "pgdata" / "PG_VERSION")) {
    return;
  }
  std::error_code ec;
  fs::remove_all(server, ec);
  if (!ec) std::cout << "deleted " << server.string() << "\n";
}

int Down(const DeployOptions& deploy) {
  const fs::path dir = fs::absolute(deploy.dir);
  if (!fs::exists(dir)) return Fail(NotFound("no local cluster in " + dir.string()));
  StopProcess(dir, "autoscaler");
  for (const auto& entry : fs::directory_iterator(dir / "pids")) {
    const std::string name = entry.path().stem().string();
    if (name.starts_with("local-agent-")) StopProcess(dir, name);
  }
  StopDynamicAgents(dir);
  StopWorkloads(dir);
  StopProcess(dir, "master");
  if (deploy.delete_data) {
    RemoveDatabaseServerFiles(dir / "postgres");
    fs::remove_all(dir);
    std::cout << "deleted " << dir.string() << "\n";
  } else {
    std::cout << "data kept in " << dir.string() << " (--delete-data removes it)\n";
  }
  return 0;
}

int ShowStatus(const CliOptions& base, const DeployOptions& deploy) {
  const fs::path dir = fs::absolute(deploy.dir);
  if (!fs::exists(dir / "pids")) return Fail(NotFound("no local cluster in " + dir.string()));
  bool master_up = false;
  for (const auto& entry : fs::directory_iterator(dir / "pids")) {
    const std::string name = entry.path().stem().string();
    const pid_t pid = PidOf(dir, name);
    const bool alive = Alive(pid);
    if (name == "master") master_up = alive;
    std::cout << name << ": " << (alive ? "running (pid " + std::to_string(pid) + ")" : "stopped")
              << "\n";
  }
  if (!master_up) return 1;
  std::cout << "\n";
  return AgentList(ClusterOptions(base, dir));
}

}  // namespace

void AddDeployCommands(CLI::App& app, CliOptions& options, int& rc) {
  static DeployOptions deploy{.dir = DefaultDir()};
  auto* root = app.add_subcommand("deploy", "run a cluster")->require_subcommand(1);
  auto* local =
      root->add_subcommand("local", "a whole cluster on this host")->require_subcommand(1);
  local->add_option("--cluster-dir", deploy.dir, "where its keys, data and logs live");
  auto* up = local->add_subcommand("up", "start the master (with PostgreSQL), agents, autoscaler");
  up->add_option("--agents", deploy.agents, "agents to start now and keep (default 0)")
      ->check(CLI::Range(0, 64));
  up->add_option("--artificial-slots", deploy.artificial_slots,
                 "give each agent N fake CPU slots instead of its devices (testing)");
  up->add_option("--max-agents", deploy.max_agents,
                 "let the autoscaler start up to N more agents on this host as work waits, each "
                 "with --artificial-slots slots (default 2), and stop them when idle (default: 4 "
                 "without --agents, else 0)")
      ->check(CLI::Range(0, 64));
  up->callback([&] { rc = Up(options, deploy); });
  auto* down = local->add_subcommand("down", "stop everything `up` started");
  down->add_flag("--delete-data", deploy.delete_data, "remove the cluster folder too");
  down->callback([&] { rc = Down(deploy); });
  local->add_subcommand("status", "what runs")->callback([&] { rc = ShowStatus(options, deploy); });
}

}  // namespace det::cli

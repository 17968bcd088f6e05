#include "tests/multihost/multihost_fixture.h"

#include <signal.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "bus/security.h"
#include "common/http_client.h"
#include "tests/testing/test_util.h"

namespace det::testing {
namespace {

constexpr const char* kDbPassword = "multihost-db-password";
constexpr int kMasterGatewayPort = 8090;
constexpr int kMasterAgentPort = 8091;
constexpr int kMasterRestPort = 8080;
constexpr int kCloudPort = 8773;
constexpr int kS3Port = 8774;

std::string SourceDir() {
  const char* dir = std::getenv("DET_SOURCE_DIR");
  return dir ? dir : DET_SOURCE_DIR_DEFAULT;
}

void WriteKeys(const fs::path& dir) {
  std::ofstream allowed(dir / "allowed_clients");
  for (const char* name : {"master", "agent", "autoscaler", "cli"}) {
    auto keys = bus::GenerateCurveKeyPair();
    ASSERT_TRUE(keys.ok()) << keys.status().ToString();
    ASSERT_TRUE(bus::WriteKeyPairFiles(*keys, (dir / name).string()).ok());
    if (std::string(name) != "master") allowed << keys->public_key << " " << name << "\n";
  }
}

}  // namespace

void MultiHostTest::SetUp() {
  if (std::string why = VirtualNetwork::WhyUnavailable(); !why.empty()) {
    GTEST_SKIP() << "the multi-host suite is skipped: " << why;
  }
  auto network = VirtualNetwork::Create();
  ASSERT_TRUE(network.ok()) << network.status().ToString();
  net_ = std::move(*network);
  std::vector<std::string> hosts = {"db", "master", "client", "cloud", "autoscaler", "intruder"};
  for (int i = 1; i <= kAgents; ++i) hosts.push_back(AgentHost(i));
  for (const std::string& name : hosts) {
    auto host = net_->AddHost(name);
    ASSERT_TRUE(host.ok()) << host.status().ToString();
  }
  dir_ = fs::temp_directory_path() / ("det-multihost-" + bus::RandomId().substr(0, 10));
  fs::create_directories(dir_ / "checkpoints");
  // The database host's server runs as `postgres`: it must reach its folder.
  fs::permissions(dir_, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  WriteKeys(dir_);
  ASSERT_NO_FATAL_FAILURE(StartDatabase());
  ASSERT_NO_FATAL_FAILURE(StartMaster());
  for (int i = 1; i <= kAgents; ++i) StartAgent(AgentHost(i));
  ASSERT_TRUE(Eventually(
      [&] {
        auto agents = Rest("GET", "/api/v1/agents");
        return agents.contains("agents") && agents["agents"].size() == kAgents;
      },
      std::chrono::seconds(30)))
      << "the agents did not all join: " << ReadLog("master.log");
}

void MultiHostTest::TearDown() {
  autoscaler_.reset();
  reaping_ = false;
  if (instance_reaper_.joinable()) instance_reaper_.join();
  cloud_.reset();
  s3_.reset();
  agents_.clear();
  master_.reset();
  if (pg_) (void)net_->RunOn("db", [&] { pg_.reset(); });
  net_.reset();  // kills whatever is left on every host
  if (!dir_.empty() && !HasFailure()) fs::remove_all(dir_);
  if (HasFailure()) std::cerr << "kept the cluster's folder for a look: " << dir_ << "\n";
}

void MultiHostTest::StartDatabase() {
  storage::LocalPostgresOptions options;
  options.data_dir = (dir_ / "postgres").string();
  options.port = 5432;
  options.listen_address = Host("db").address;
  options.client_network = "10.99.0.0/24";
  // Thrown away after the test, like the suite's shared server: no flushes to disk. A host's loss
  // here kills its processes, never the kernel, so every commit is still in the page cache.
  options.server_settings = {"fsync=off", "full_page_writes=off"};
  Result<std::unique_ptr<storage::LocalPostgres>> started = Internal("not started");
  ASSERT_TRUE(net_->RunOn("db", [&] { started = storage::LocalPostgres::Start(options); }).ok());
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  pg_ = std::move(*started);
}

void MultiHostTest::StartMaster() {
  const storage::DbConfig& db = pg_->db();
  std::ofstream(dir_ / "master.yaml")
      << "db:\n  host: " << db.host << "\n  port: " << db.port << "\n  name: " << db.name
      << "\n  user: " << db.user << "\n  password: " << db.password << "\nport: " << kMasterRestPort
      << "\nsecurity:\n  initial_user_password: " << kAdminPassword
      << "\nbus:\n  host: " << Host("master").address << "\n  gateway_port: " << kMasterGatewayPort
      << "\n  agent_port: " << kMasterAgentPort << "\n  agent_silence_limit: " << kAgentSilenceLimit
      << "\n  agent_reconnect_wait: " << kAgentReconnectWait
      << "\n  security:\n    key_file: " << (dir_ / "master.key").string()
      << "\n    allowed_clients_file: " << (dir_ / "allowed_clients").string() << "\n"
      << ExtraMasterConfig();
  const std::string log = "master" + (master_starts_ == 0 ? "" : std::to_string(master_starts_));
  ++master_starts_;
  master_ = std::make_unique<Process>(net_->On("master", {BuildDir() + "/master/det-master", "-c",
                                                          (dir_ / "master.yaml").string()}),
                                      dir_ / (log + ".log"));
  token_.clear();
  ASSERT_TRUE(Eventually([&] { return Rest("GET", "/api/v1/master").contains("clusterId"); },
                         std::chrono::seconds(30)))
      << "the master did not start: " << ReadLog(log + ".log");
}

void MultiHostTest::StartAgent(const std::string& host) {
  const fs::path config = dir_ / (host + ".yaml");
  std::ofstream(config) << "master_host: " << Host("master").address
                        << "\nmaster_port: " << kMasterAgentPort << "\nagent_id: " << host
                        << "\nartificial_slots: 1\nwork_dir: " << (dir_ / "work" / host).string()
                        << "\nagent_reconnect_attempts: 0\nagent_reconnect_backoff: 1s"
                        << "\nmaster_silence_limit: " << kAgentSilenceLimit
                        << "\nsecurity:\n  key_file: " << (dir_ / "agent.key").string()
                        << "\n  server_public_key_file: " << (dir_ / "master.pub").string() << "\n";
  agents_[host] = std::make_unique<Process>(
      net_->On(host, {BuildDir() + "/agent/det-agent", "-c", config.string()}),
      dir_ / (host + ".log"), /*append=*/true);
}

std::string MultiHostTest::CloudPools(const std::string& extra_provider_lines) const {
  return "resource_pools:\n  - pool_name: default\n  - pool_name: cloud\n    provider:\n"
         "      type: aws\n      region: us-west-2\n      endpoint_url: http://" +
         Host("cloud").address + ":" + std::to_string(kCloudPort) +
         "/\n      image_id: ami-det-agent\n      ssh_key_name: det\n"
         "      instance_type: t3.large\n      instance_slots: 1\n      max_instances: 2\n"
         "      max_idle_agent_period: 3s\n      master_host: " +
         Host("master").address + "\n      agent_binary: " + BuildDir() +
         "/agent/det-agent\n      agent_args: [--artificial-slots, '1']\n"
         "      agent_key_file: " +
         (dir_ / "agent.key").string() +
         "\n      master_public_key_file: " + (dir_ / "master.pub").string() + "\n" +
         extra_provider_lines;
}

void MultiHostTest::StartCloud() {
  std::vector<std::string> argv = {"/usr/bin/env"};
  for (const std::string& variable :
       net_->InstanceHostEnvironment((dir_ / "instance-addresses").string())) {
    argv.push_back(variable);
  }
  argv.insert(argv.end(), {BuildDir() + "/tests/fake-ec2", "--host", Host("cloud").address,
                           "--port", std::to_string(kCloudPort), "--boot", "--boot-wrapper",
                           SourceDir() + "/tests/multihost/instance-host.sh", "--work-dir",
                           (dir_ / "instances").string(), "--boot-delay-ms", "500"});
  cloud_ = std::make_unique<Process>(net_->On("cloud", argv), dir_ / "fake-ec2.log");
  ASSERT_TRUE(Eventually([&] { return CloudAdmin("state").is_object(); }, std::chrono::seconds(10)))
      << ReadLog("fake-ec2.log");
  // A terminated instance's host is gone: whatever ran there (its agent's workloads too) dies.
  reaping_ = true;
  instance_reaper_ = std::thread([this] {
    while (reaping_) {
      nlohmann::json state = CloudAdmin("state");
      if (state.contains("instances")) {
        for (const auto& instance : state["instances"]) {
          if (instance.value("state", "") != "terminated") continue;
          VirtualNetwork::KillEverythingInNamespace(
              net_->InstanceNamespace(instance.value("id", "")));
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  });
}

void MultiHostTest::StartAutoscaler() {
  std::ofstream(dir_ / "autoscaler.yaml")
      << "master_host: " << Host("master").address << "\nlog: {level: debug}"
      << "\nsecurity:\n  key_file: " << (dir_ / "autoscaler.key").string()
      << "\n  server_public_key_file: " << (dir_ / "master.pub").string() << "\n";
  const std::string log =
      "autoscaler" + (autoscaler_starts_ == 0 ? "" : std::to_string(autoscaler_starts_)) + ".log";
  ++autoscaler_starts_;
  autoscaler_ = std::make_unique<Process>(
      net_->On("autoscaler",
               {"/usr/bin/env", "AWS_ACCESS_KEY_ID=AKIDFAKE", "AWS_SECRET_ACCESS_KEY=fake-secret",
                "AWS_EC2_METADATA_DISABLED=true", BuildDir() + "/autoscaler/det-autoscaler", "-c",
                (dir_ / "autoscaler.yaml").string()}),
      dir_ / log);
}

void MultiHostTest::StartS3(const std::string& bucket) {
  s3_ = std::make_unique<Process>(
      net_->On("cloud", {BuildDir() + "/tests/fake-s3", "--host", Host("cloud").address, "--port",
                         std::to_string(kS3Port), "--data-dir", (dir_ / "s3-data").string(),
                         "--bucket", bucket}),
      dir_ / "fake-s3.log");
  ASSERT_TRUE(Eventually([&] { return S3Admin("calls").is_array(); }, std::chrono::seconds(10)))
      << ReadLog("fake-s3.log");
}

std::string MultiHostTest::S3Endpoint() const {
  return "http://" + Host("cloud").address + ":" + std::to_string(kS3Port);
}

nlohmann::json MultiHostTest::S3Admin(const std::string& path, const nlohmann::json& body) {
  return FakeAdmin(kS3Port, path, body);
}

nlohmann::json MultiHostTest::CloudAdmin(const std::string& path, const nlohmann::json& body) {
  return FakeAdmin(kCloudPort, path, body);
}

nlohmann::json MultiHostTest::FakeAdmin(int port, const std::string& path,
                                        const nlohmann::json& body) {
  nlohmann::json answer;
  (void)net_->RunOn("client", [&] {
    HttpClient http;
    HttpRequest request;
    request.method = body.is_null() ? "GET" : "POST";
    request.url = "http://" + Host("cloud").address + ":" + std::to_string(port) + "/_fake/" + path;
    request.body = body.is_null() ? "" : body.dump();
    request.timeout = std::chrono::seconds(10);
    request.connect_timeout = std::chrono::seconds(2);
    auto response = http.Send(request);
    if (!response.ok()) return;
    // A stream (task logs: lines of {"result": ...}, one line too): its results as an array.
    if (response->body.starts_with("{\"result\"")) {
      answer = NdjsonResults(response->body);
      return;
    }
    answer = nlohmann::json::parse(response->body, nullptr, /*allow_exceptions=*/false);
    if (answer.is_discarded()) answer = nullptr;
  });
  return answer;
}

void MultiHostTest::CheckNoInstanceLeft() {
  nlohmann::json instances;
  const bool terminated = Eventually(
      [&] {
        instances = Instances();
        if (!instances.is_array()) return false;
        for (const auto& instance : instances) {
          if (instance.value("state", "") != "terminated") return false;
        }
        return true;
      },
      std::chrono::seconds(60));
  std::string left;
  for (const auto& instance : instances) {
    if (instance.value("state", "") != "terminated") left += instance.value("id", "") + " ";
  }
  EXPECT_TRUE(terminated) << "instances left: " << left << ReadLog("autoscaler.log");
}

std::string MultiHostTest::Det(const std::string& args) {
  const std::string command =
      "ip netns exec " + Host("client").netns + " env DET_USER=admin DET_PASS=" + kAdminPassword +
      " DET_AUTH_FILE=" + (dir_ / "auth.json").string() + " timeout 120 " + BuildDir() +
      "/cli/det -m tcp://" + Host("master").address + ":" + std::to_string(kMasterGatewayPort) +
      " --key-file " + (dir_ / "cli.key").string() + " --master-key-file " +
      (dir_ / "master.pub").string() + " " + args + " 2>&1";
  return Shell(command);
}

nlohmann::json MultiHostTest::Rest(const std::string& method, const std::string& path,
                                   const std::string& body) {
  const std::string base =
      "http://" + Host("master").address + ":" + std::to_string(kMasterRestPort);
  nlohmann::json answer;
  (void)net_->RunOn("client", [&] {
    HttpClient http;
    auto send = [&](const std::string& m, const std::string& p, const std::string& b) {
      HttpRequest request;
      request.method = m;
      request.url = base + p;
      request.body = b;
      request.timeout = std::chrono::seconds(10);
      request.connect_timeout = std::chrono::seconds(2);
      request.headers = {{"Content-Type", "application/json"}};
      if (!token_.empty()) request.headers.push_back({"Authorization", "Bearer " + token_});
      return http.Send(request);
    };
    if (token_.empty() && path != "/api/v1/master") {
      auto login = send("POST", "/api/v1/auth/login",
                        nlohmann::json{{"username", "admin"}, {"password", kAdminPassword}}.dump());
      if (!login.ok() || login->status != 200) return;
      token_ = nlohmann::json::parse(login->body, nullptr, false).value("token", "");
    }
    auto response = send(method, path, body);
    if (!response.ok()) return;
    if (response->status == 401) token_.clear();  // a restarted master may have dropped it
    // A stream (task logs: lines of {"result": ...}, one line too): its results as an array.
    if (response->body.starts_with("{\"result\"")) {
      answer = NdjsonResults(response->body);
      return;
    }
    answer = nlohmann::json::parse(response->body, nullptr, /*allow_exceptions=*/false);
    if (answer.is_discarded()) answer = nullptr;
  });
  return answer;
}

int64_t MultiHostTest::CreateExperiment(const TrialShape& shape, double step_seconds,
                                        const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json config = {
      {"name", "multihost"},
      {"entrypoint", "python3 train.py"},
      {"hyperparameters",
       {{"learning_rate", 0.1}, {"batch_size", 16}, {"step_seconds", step_seconds}}},
      {"searcher",
       {{"name", "single"},
        {"metric", "validation_loss"},
        {"smaller_is_better", true},
        {"max_length", {{"batches", shape.batches}}}}},
      {"min_validation_period", {{"batches", shape.validation_period}}},
      {"resources", {{"slots_per_trial", 1}}},
      {"checkpoint_storage",
       {{"type", "shared_fs"}, {"host_path", (dir_ / "checkpoints").string()}}},
      {"max_restarts", 5}};
  if (edit) edit(config);
  const fs::path path = dir_ / ("experiment-" + bus::RandomId().substr(0, 8) + ".yaml");
  std::ofstream(path) << config.dump(2);  // JSON is YAML
  const std::string out = Det("--json experiment create " + path.string() + " " + SourceDir() +
                              "/examples/linear_regression");
  auto reply = nlohmann::json::parse(out, nullptr, false);
  EXPECT_TRUE(reply.is_object()) << out;
  return reply.is_object() ? reply.value("id", int64_t{0}) : 0;
}

nlohmann::json MultiHostTest::Describe(int64_t experiment_id) {
  return nlohmann::json::parse(Det("--json experiment describe " + std::to_string(experiment_id)),
                               nullptr, false);
}

nlohmann::json MultiHostTest::WaitForTrial(int64_t experiment_id,
                                           const std::function<bool(const nlohmann::json&)>& done,
                                           std::chrono::seconds timeout) {
  nlohmann::json found;
  Eventually(
      [&] {
        auto described = Describe(experiment_id);
        if (!described.is_object() || !described.contains("trials") ||
            described["trials"].empty()) {
          return false;
        }
        if (!done(described["trials"][0])) return false;
        found = described["trials"][0];
        return true;
      },
      timeout);
  return found;
}

std::string MultiHostTest::WaitEnded(int64_t experiment_id, std::chrono::seconds timeout) {
  static const std::set<std::string> kEnded = {"COMPLETED", "CANCELED", "ERROR"};
  std::string state;
  Eventually(
      [&] {
        auto described = Describe(experiment_id);
        if (described.is_object() && described.contains("experiment")) {
          state = described["experiment"].value("state", "");
        }
        return kEnded.count(state) > 0;
      },
      timeout);
  return kEnded.count(state) ? state : "";
}

std::string MultiHostTest::HostRunningTrial(int64_t experiment_id) {
  auto described = Describe(experiment_id);
  if (!described.is_object() || described["trials"].empty()) return "";
  const std::string task_id = described["trials"][0].value("task_id", "");
  if (task_id.empty()) return "";
  auto task = Rest("GET", "/api/v1/tasks/" + task_id);
  if (!task.contains("task") || task["task"].value("state", "") != "RUNNING") return "";
  const auto& agents = task["task"]["agents"];
  return agents.is_array() && !agents.empty() ? agents[0].get<std::string>() : "";
}

std::vector<MetricPoint> MultiHostTest::MetricPoints(int64_t trial_id, const std::string& kind) {
  std::vector<MetricPoint> points;
  auto reply = Rest("GET", "/api/v1/trials/" + std::to_string(trial_id) + "/metrics?kind=" + kind +
                               "&limit=10000");
  if (!reply.contains("metrics")) return points;
  for (const auto& point : reply["metrics"]) {
    points.push_back({point.value("step", int64_t{0}), point.value("runId", 0)});
  }
  return points;
}

std::vector<int64_t> MultiHostTest::MetricSteps(int64_t trial_id, const std::string& kind) {
  std::vector<int64_t> steps;
  for (const MetricPoint& point : MetricPoints(trial_id, kind)) steps.push_back(point.step);
  return steps;
}

ProgressMark MultiHostTest::MarkProgress(int64_t experiment_id) {
  ProgressMark mark;
  mark.trial_id = Describe(experiment_id)["trials"][0].value("id", int64_t{0});
  const std::vector<MetricPoint> points = MetricPoints(mark.trial_id, "training");
  if (!points.empty()) mark.last = points.back();
  mark.at = std::chrono::steady_clock::now();
  return mark;
}

double MultiHostTest::SecondsUntilProgress(const ProgressMark& mark, bool in_a_new_run) {
  const bool progressed = Eventually(
      [&] {
        for (const MetricPoint& point : MetricPoints(mark.trial_id, "training")) {
          if (in_a_new_run ? point.run_id > mark.last.run_id : point.step > mark.last.step) {
            return true;
          }
        }
        return false;
      },
      std::chrono::seconds(120));
  if (!progressed) return -1;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - mark.at).count();
}

void MultiHostTest::CheckNothingLost(int64_t experiment_id, const TrialShape& shape) {
  EXPECT_EQ(WaitEnded(experiment_id), "COMPLETED") << ReadLog("master.log");
  auto described = Describe(experiment_id);
  ASSERT_TRUE(described.is_object() && described.contains("trials"));
  auto every = [](int period, int last) {
    std::vector<int64_t> steps;
    for (int s = period; s <= last; s += period) steps.push_back(s);
    return steps;
  };
  for (const auto& trial : described["trials"]) {
    const int64_t id = trial.value("id", int64_t{0});
    EXPECT_EQ(trial.value("state", ""), "COMPLETED");
    EXPECT_EQ(MetricSteps(id, "training"), every(5, shape.batches)) << "trial " << id;
    EXPECT_EQ(MetricSteps(id, "validation"), every(shape.validation_period, shape.batches))
        << "trial " << id;
  }
  CheckNoSecretLogged();
  // Workloads end with their trial; only each host's agent may remain.
  for (int i = 1; i <= kAgents; ++i) {
    const std::string host = AgentHost(i);
    std::vector<pid_t> left;
    const bool clean = Eventually(
        [&] {
          left.clear();
          for (pid_t pid : net_->ProcessesOn(host)) {
            const std::string proc = "/proc/" + std::to_string(pid);
            const std::string args = ReadProcFile(proc + "/cmdline");
            // The agent's shim server (cwd "/") is the agent's; its clones work in their folders.
            std::error_code unreadable;
            const bool shim_server =
                args.find("__server") != std::string::npos &&
                std::filesystem::read_symlink(proc + "/cwd", unreadable) == "/";
            if (args.find("det-agent") == std::string::npos && !shim_server) left.push_back(pid);
          }
          return left.empty();
        },
        std::chrono::seconds(20));
    EXPECT_TRUE(clean) << left.size() << " processes other than the agent left on " << host;
  }
}

void MultiHostTest::CheckNoSecretLogged() {
  std::map<std::string, std::string> secrets = {{"the database password", pg_->db().password},
                                                {"the admin password", kAdminPassword},
                                                {"the admin's session token", token_},
                                                {"the AWS secret key", "fake-secret"}};
  for (const char* name : {"master", "agent", "autoscaler", "cli"}) {
    auto keys = bus::ReadKeyFile((dir_ / (std::string(name) + ".key")).string());
    if (keys.ok()) secrets[std::string(name) + "'s CURVE secret key"] = keys->secret_key;
  }
  std::map<std::string, std::string> logs = {{"det master logs", Det("master logs")}};
  // The components' logs: the cluster folder's, and each cloud instance's (boot, agent).
  std::vector<fs::path> folders = {dir_};
  std::error_code ec;
  for (const auto& instance : fs::directory_iterator(dir_ / "instances", ec)) {
    folders.push_back(instance.path());
  }
  for (const fs::path& folder : folders) {
    for (const auto& entry : fs::directory_iterator(folder, ec)) {
      if (entry.path().extension() != ".log" || entry.path().filename() == "fake-ec2.log") continue;
      std::ifstream in(entry.path());
      logs[entry.path().string()] = std::string((std::istreambuf_iterator<char>(in)), {});
    }
  }
  for (const auto& [log, text] : logs) {
    for (const auto& [what, secret] : secrets) {
      if (secret.size() < 8) continue;
      EXPECT_EQ(text.find(secret), std::string::npos) << what << " is in " << log;
    }
  }
}

void MultiHostTest::Report(const std::string& fault, const std::string& outcome,
                           double recovery_seconds) {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f s", recovery_seconds);
  const std::string row = "| " + fault + " | " + outcome + " | " +
                          (recovery_seconds < 0 ? std::string("did not recover") : seconds) +
                          " | " + (HasFailure() ? "SEE FAILURES" : "none") + " |";
  std::cout << "[fault report] " << row << std::endl;
  if (const char* report = std::getenv("DET_MULTIHOST_REPORT")) {
    std::ofstream(report, std::ios::app) << row << "\n";
  }
}

pid_t MultiHostTest::FindProcess(const std::string& host, const std::string& needle) const {
  for (pid_t pid : net_->ProcessesOn(host)) {
    const std::string args = ReadProcFile("/proc/" + std::to_string(pid) + "/cmdline");
    if (args.find(needle) != std::string::npos) return pid;
  }
  return -1;
}

std::string MultiHostTest::ReadLog(const std::string& name) const {
  std::ifstream in(dir_ / name);
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  return s.size() > 6000 ? "..." + s.substr(s.size() - 6000) : s;
}

}  // namespace det::testing

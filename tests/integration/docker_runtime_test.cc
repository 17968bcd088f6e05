// The agent's docker runtime end to end: real det-master, det-agent (container_runtime docker),
// det CLI and a Docker Engine API on a unix socket, which is the fake engine (fake-docker: its
// containers are host processes) and the real one: dockerd with two registries on loopback, which
// the test command starts (scripts/docker-test-engine.sh writes <build>/docker-test/engine.env).
#include <unistd.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "agent/docker/docker_client.h"
#include "common/http_client.h"
#include "tests/testing/experiment_fixture.h"
#include "tests/testing/rest_client.h"

namespace det {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

// The images and registry the tests use on either engine.
struct Engine {
  std::string name;            // "fake" | "real"
  std::string socket;          // its API
  std::string image;           // present, with /bin/sh and python3
  std::string pullable;        // absent until pulled; anyone may pull it
  std::string private_image;   // absent until pulled with the registry's credentials
  std::string registry;        // the private image's registry (serveraddress)
  std::string user, password;  // its credentials
  std::string no_such_image;   // an image no registry has
  std::string no_such_reason;  // what the engine says when asked to pull it
};

// KEY=value lines of the real engine's description; empty when there is no such file.
std::map<std::string, std::string> ReadEngineEnv(const fs::path& path) {
  std::map<std::string, std::string> values;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (const size_t eq = line.find('='); eq != std::string::npos)
      values[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return values;
}

// "host:port" of image reference "host:port/repository:tag".
std::string OpenRegistryOf(const std::string& image) { return image.substr(0, image.find('/')); }

fs::path RealEngineEnvFile() {
  const char* path = std::getenv("DET_TEST_DOCKER_ENV");
  return path ? fs::path(path) : fs::path(testing::BuildDir()) / "docker-test" / "engine.env";
}

class DockerRuntimeTest : public testing::ExperimentFixture,
                          public ::testing::WithParamInterface<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "real") {
      const fs::path env_file = RealEngineEnvFile();
      std::map<std::string, std::string> env = ReadEngineEnv(env_file);
      if (env.empty()) {
        GTEST_SKIP() << "no real Docker engine (" << env_file
                     << " is missing: scripts/docker-test-engine.sh start <build>/docker-test "
                        "starts one, as scripts/test.sh does); ran against the fake engine only";
      }
      engine_ = {"real",
                 env["DET_TEST_DOCKER_SOCKET"],
                 env["DET_TEST_DOCKER_IMAGE"],
                 env["DET_TEST_DOCKER_PULLABLE"],
                 env["DET_TEST_DOCKER_PRIVATE"],
                 env["DET_TEST_DOCKER_REGISTRY"],
                 env["DET_TEST_DOCKER_REGISTRY_USER"],
                 env["DET_TEST_DOCKER_REGISTRY_PASSWORD"],
                 OpenRegistryOf(env["DET_TEST_DOCKER_PULLABLE"]) + "/det-test/no-such-image:1",
                 "manifest unknown"};
      // The file says an engine runs: one that does not answer, or lacks the image, fails.
      agent::DockerClient engine(engine_.socket);
      Result<std::string> api = engine.Ping();
      ASSERT_TRUE(api.ok()) << "the Docker engine of " << env_file
                            << " does not answer: " << api.status().message();
      Result<bool> has_image = engine.ImageExists(engine_.image);
      ASSERT_TRUE(has_image.ok() && *has_image) << engine_.image << " is not in the engine";
    } else {
      socket_dir_ = fs::path("/tmp") / ("det-docker-" + bus::RandomId().substr(0, 8));
      fs::create_directories(socket_dir_);
      engine_ = {"fake",
                 (socket_dir_ / "docker.sock").string(),
                 "det-test/python:3",
                 "det-test/pullable:1",
                 "det-test/private:1",
                 "registry",
                 "det-user",
                 "det-secret",
                 "det-test/no-such-image:1",
                 "denied"};
    }
    ExperimentFixture::SetUp();
    if (engine_.name == "fake") {
      fake_ = std::make_unique<testing::Process>(
          std::vector<std::string>{
              testing::BuildDir() + "/tests/fake-docker", "--socket", engine_.socket, "--image",
              engine_.image, "--pullable", engine_.pullable, "--private",
              engine_.private_image + "=" + engine_.user + ":" + engine_.password},
          dir_ / "fake-docker.log");
      for (int i = 0; i < 100 && !fs::exists(engine_.socket); ++i)
        std::this_thread::sleep_for(50ms);
      ASSERT_TRUE(fs::exists(engine_.socket)) << Log("fake-docker.log");
    }
  }
  void TearDown() override {
    if (fake_) fake_->Stop(SIGTERM);  // the fake kills its containers' processes
    // The real engine outlives the test: what a failed test left there must not reach the next.
    if (engine_.name == "real") RemoveContainersLabelled("det.agent-id=agent-d");
    ExperimentFixture::TearDown();
    if (!socket_dir_.empty()) fs::remove_all(socket_dir_);
  }

  // Where agents find the master.
  virtual std::string AgentMasterHost() const { return BusHost(); }

  // An agent of the docker runtime; `yaml`: its agent.yaml, if any.
  std::unique_ptr<testing::Process> StartDockerAgent(const std::string& id, int slots = 2,
                                                     const std::string& yaml = "") {
    std::vector<std::string> argv = {testing::BuildDir() + "/agent/det-agent",
                                     "--master-port",
                                     agent_port_,
                                     "--agent-id",
                                     id,
                                     "--artificial-slots",
                                     std::to_string(slots),
                                     "--work-dir",
                                     (dir_ / ("work-" + id)).string(),
                                     "--plaintext",
                                     "--container-runtime",
                                     "docker",
                                     "--docker-socket",
                                     engine_.socket,
                                     "--master-host",
                                     AgentMasterHost()};
    if (!yaml.empty()) {
      const fs::path config = dir_ / (id + ".yaml");
      std::ofstream(config) << yaml;
      argv.insert(argv.end(), {"-c", config.string()});
    }
    return std::make_unique<testing::Process>(argv, dir_ / (id + ".log"), /*append=*/true);
  }

  // A call to the engine's API (either engine answers these the same way).
  nlohmann::json EngineCall(const std::string& method, const std::string& path,
                            const nlohmann::json& body = nullptr) {
    HttpRequest request;
    request.method = method;
    request.url = "http://docker/v1.41" + path;
    request.unix_socket = engine_.socket;
    if (!body.is_null()) {
      request.headers = {{"Content-Type", "application/json"}};
      request.body = body.dump();
    }
    auto response = http_.Send(request);
    if (!response.ok()) return {{"error", response.status().message()}};
    return nlohmann::json::parse(response->body, nullptr, false);
  }
  // The containers (running or not) labelled `label` ("key=value").
  nlohmann::json ContainersLabelled(const std::string& label) {
    const nlohmann::json filters = {{"label", {label}}};
    return EngineCall("GET", "/containers/json?all=1&filters=" + UriEncode(filters.dump(), false));
  }
  nlohmann::json ContainersOf(const std::string& task_id) {
    return ContainersLabelled("det.task-id=" + task_id);
  }
  void RemoveContainersLabelled(const std::string& label) {
    const nlohmann::json list = ContainersLabelled(label);
    if (!list.is_array()) return;
    for (const auto& container : list)
      EngineCall("DELETE", "/containers/" + container.value("Id", "") + "?force=1");
  }
  // Removes `image` from the engine, so that running it must pull it.
  void RemoveImage(const std::string& image) {
    EngineCall("DELETE", "/images/" + image + "?force=1");
  }
  // Waits for task `task_id` to have a running container; its inspection.
  nlohmann::json RunningContainerOf(const std::string& task_id) {
    for (int i = 0; i < 200; ++i) {
      nlohmann::json list = ContainersOf(task_id);
      if (list.is_array() && !list.empty() && list[0].value("State", "") == "running") {
        return EngineCall("GET", "/containers/" + list[0].value("Id", "") + "/json");
      }
      std::this_thread::sleep_for(50ms);
    }
    return nullptr;
  }
  std::string RunIn(const std::string& image, const std::string& script,
                    const std::string& flags = "") {
    return Run(script, "--image " + image + " " + flags);
  }
  void WaitForAgent() {
    for (int i = 0; i < 100; ++i) {
      auto agents = nlohmann::json::parse(Det("--json agent list"), nullptr, false);
      if (agents.is_array() && agents.size() == 1) return;
      std::this_thread::sleep_for(100ms);
    }
    FAIL() << "the agent did not join: " << Log("agent-d.log");
  }

  Engine engine_;
  fs::path socket_dir_;
  std::unique_ptr<testing::Process> fake_;
  HttpClient http_;
};

TEST_P(DockerRuntimeTest, CommandRunsInItsContainerWithItsFolderEnvironmentAndOutput) {
  auto agent = StartDockerAgent("agent-d");
  WaitForAgent();
  const std::string id = RunIn(engine_.image,
                               "echo \"task $DET_TASK_ID in $(pwd)\"; echo to-stderr >&2; "
                               "echo \"as $(id -u):$(id -g)\"; echo ready; sleep 1; exit 3",
                               "--shm-size 256M");
  ASSERT_FALSE(id.empty());
  const nlohmann::json container = RunningContainerOf(id);
  ASSERT_TRUE(container.is_object()) << ContainersOf(id) << Log("agent-d.log");
  const nlohmann::json config = container["Config"], host = container["HostConfig"];
  EXPECT_EQ(config.value("Image", ""), engine_.image);
  // An agent as root runs a task no one linked to an account as its default_task_user (nobody);
  // one that is not root, as itself.
  const std::string account =
      geteuid() == 0 ? "65534:65534" : std::to_string(getuid()) + ":" + std::to_string(getgid());
  EXPECT_EQ(config.value("User", ""), account);
  const std::string folder = config.value("WorkingDir", "");
  EXPECT_EQ(folder.rfind((dir_ / "work-agent-d").string(), 0), 0u) << folder;
  EXPECT_EQ(config["Labels"].value("det.agent-id", ""), "agent-d");
  EXPECT_EQ(config["Labels"].value("det.task-id", ""), id);
  EXPECT_EQ(host.value("ShmSize", int64_t{0}), 256 * 1024 * 1024);
  EXPECT_EQ(host.value("NetworkMode", ""), "host");
  EXPECT_NE(host["Binds"].dump().find(folder + ":" + folder), std::string::npos) << host;
  // What the pump and a restarted agent trust stays outside what the container can write.
  EXPECT_FALSE(fs::exists(fs::path(folder) / "container.json")) << folder;
  EXPECT_TRUE(fs::exists(fs::path(folder).parent_path() / "container.json")) << folder;
  bool has_master = false;
  for (const auto& e : config["Env"])
    has_master |= e.get<std::string>().rfind("DET_MASTER=", 0) == 0;
  EXPECT_TRUE(has_master) << config["Env"];

  nlohmann::json summary = Wait(id);
  EXPECT_EQ(summary.value("exit_code", 0), 3) << summary.dump();
  EXPECT_EQ(summary.value("failure_type", ""), "TaskError");
  const std::vector<std::string> texts = LogTexts(id);
  EXPECT_NE(std::find(texts.begin(), texts.end(), "task " + id + " in " + folder), texts.end())
      << Det("task logs " + id);
  EXPECT_NE(std::find(texts.begin(), texts.end(), "to-stderr"), texts.end());
  EXPECT_NE(std::find(texts.begin(), texts.end(), "as " + account), texts.end())
      << Det("task logs " + id);
  EXPECT_EQ(ContainersOf(id), nlohmann::json::array()) << "the ended container is removed";
}

TEST_P(DockerRuntimeTest, ExperimentTrialsRunInContainersAndWriteTheirCheckpoints) {
  auto agent = StartDockerAgent("agent-d");
  const int64_t id = Create(Config("const.yaml", [&](YAML::Node& config) {
    config["environment"]["image"]["cpu"] = engine_.image;
    config["searcher"]["max_length"]["batches"] = 40;
  }));
  ASSERT_GT(id, 0);
  EXPECT_EQ(WaitEnded(id), "COMPLETED") << Log("agent-d.log") << Log("master.log");
  auto trial = Describe(id)["trials"][0];
  EXPECT_EQ(trial.value("state", ""), "COMPLETED")
      << Det("trial logs " + std::to_string(trial.value("id", int64_t{0})));
  EXPECT_EQ(trial.value("state", ""), "COMPLETED");
  const fs::path checkpoint = dir_ / "checkpoints" / trial.value("latest_checkpoint", "");
  EXPECT_TRUE(fs::exists(checkpoint / "state.json"));
  // The trial's files are its account's only (umask 077), whatever the image's umask.
  for (const fs::path& made : {checkpoint, checkpoint / "state.json"}) {
    EXPECT_EQ(fs::status(made).permissions() & (fs::perms::group_all | fs::perms::others_all),
              fs::perms::none)
        << made;
  }
  EXPECT_NE(Log("agent-d.log").find("in container det-"), std::string::npos);
}

// The agent's docker.network_mode reaches the engine (none: a container with no interface but
// loopback), and DET_MASTER names the master as containers reach it (container_master_host).
TEST_P(DockerRuntimeTest, ContainersGetTheAgentsNetworkAndTheMasterAsTheyReachIt) {
  auto agent = StartDockerAgent("agent-d", 2,
                                "docker: {network_mode: none}\n"
                                "container_master_host: localhost\n");
  WaitForAgent();
  const std::string id =
      RunIn(engine_.image, "echo \"master=$DET_MASTER\"; ls /sys/class/net; sleep 1");
  const nlohmann::json container = RunningContainerOf(id);
  ASSERT_TRUE(container.is_object()) << Log("agent-d.log");
  EXPECT_EQ(container["HostConfig"].value("NetworkMode", ""), "none");
  EXPECT_EQ(Wait(id).value("exit_code", -1), 0) << Log("agent-d.log");
  const std::vector<std::string> texts = LogTexts(id);
  ASSERT_FALSE(texts.empty()) << Det("task logs " + id);
  EXPECT_EQ(texts[0], "master=http://localhost:" + rest_port_);
  // The fake's containers are host processes, on the host's network.
  if (engine_.name == "real") {
    EXPECT_EQ(std::vector<std::string>(texts.begin() + 1, texts.end()),
              std::vector<std::string>{"lo"});
  }
}

// Users linked to accounts on agents: each container runs as its user's account (uid, gid and
// the host's other groups of it) and reaches nothing of another account's task.
TEST_P(DockerRuntimeTest, ALinkedUsersContainerRunsAsItsAccountAndReachesOnlyItsOwn) {
  if (geteuid() != 0) GTEST_SKIP() << "an agent switches users only as root; this test is not root";
  auto agent = StartDockerAgent("agent-d");
  WaitForAgent();
  for (const auto& [user, uid] : {std::pair{"alice", 4242}, {"bob", 5000}}) {
    ASSERT_NE(CreateUser(user, "password-of-" + std::string(user)).find("rc=0"), std::string::npos);
    Det("user link-with-agent-user " + std::string(user) + " --agent-uid " + std::to_string(uid) +
        " --agent-gid " + std::to_string(uid + 1) + " --agent-user " + user + " --agent-group " +
        user + "s");
  }
  const std::string image = "--image " + engine_.image;
  const std::string bobs_task =
      RunAs("bob", "password-of-bob", "echo bobs-note > note; echo dir=$PWD; sleep 60", image);
  const std::string bobs_dir = WaitForOutput("bob", "password-of-bob", bobs_task, "dir=");
  ASSERT_FALSE(bobs_dir.empty()) << Log("agent-d.log");

  const std::string alices_task = RunAs("alice", "password-of-alice",
                                        "echo as $(id -u):$(id -g); cat " + bobs_dir +
                                            "/note; echo note=$?; touch mine; echo "
                                            "wrote=$?; sleep 1",
                                        image);
  const nlohmann::json container = RunningContainerOf(alices_task);
  ASSERT_TRUE(container.is_object()) << Log("agent-d.log");
  EXPECT_EQ(container["Config"].value("User", ""), "4242:4243");
  Wait(alices_task);
  const std::string alice = DetAs("alice", "password-of-alice", "task logs " + alices_task);
  for (const char* expected : {"as 4242:4243", "note=1", "wrote=0"}) {
    EXPECT_NE(alice.find(expected), std::string::npos) << expected << "\n" << alice;
  }
  EXPECT_EQ(alice.find("bobs-note"), std::string::npos) << alice;
  Det("task kill " + bobs_task);
}

TEST_P(DockerRuntimeTest, MissingImageIsPulledWithProgressInTheLogs) {
  RemoveImage(engine_.pullable);
  auto agent = StartDockerAgent("agent-d");
  WaitForAgent();
  const std::string id = RunIn(engine_.pullable, "echo pulled-and-ran", "--force-pull-image");
  nlohmann::json summary = Wait(id);
  EXPECT_EQ(summary.value("exit_code", -1), 0) << summary.dump() << Log("agent-d.log");
  const std::string logs = Det("task logs " + id);
  EXPECT_NE(logs.find("pulling image " + engine_.pullable), std::string::npos) << logs;
  EXPECT_NE(logs.find("pulled-and-ran"), std::string::npos) << logs;
}

TEST_P(DockerRuntimeTest, PullFailureFailsTheTaskWithTheEnginesReason) {
  auto agent = StartDockerAgent("agent-d");
  WaitForAgent();
  const std::string id = RunIn(engine_.no_such_image, "echo never");
  nlohmann::json summary = Wait(id);
  EXPECT_EQ(summary.value("failure_type", ""), "StartFailed") << summary.dump();
  const std::string message = summary.value("message", "");
  EXPECT_NE(message.find(engine_.no_such_image), std::string::npos) << message;
  EXPECT_NE(message.find(engine_.no_such_reason), std::string::npos) << message;
}

TEST_P(DockerRuntimeTest, PrivateImageIsPulledWithTheRegistryAuthOfTheCommand) {
  RemoveImage(engine_.private_image);
  auto agent = StartDockerAgent("agent-d");
  WaitForAgent();
  const testing::RestClient rest(std::stoi(rest_port_));
  const std::string token = rest.Login("admin", testing::kAdminPassword);
  auto run = [&](const std::string& password) {
    const nlohmann::json config = {{"entrypoint", {"/bin/sh", "-c", "echo private-ran"}},
                                   {"environment",
                                    {{"image", engine_.private_image},
                                     {"registry_auth",
                                      {{"username", engine_.user},
                                       {"password", password},
                                       {"serveraddress", engine_.registry}}}}}};
    const testing::RestAnswer answer =
        rest.Send("POST", "/api/v1/commands", token, nlohmann::json{{"config", config}}.dump());
    EXPECT_EQ(answer.status, 200) << answer.text;
    return answer.body.is_object() ? answer.body["command"].value("id", "") : "";
  };
  // One after the other: the image the right password pulls would spare the wrong one its pull.
  const std::string refused = run("wrong");
  ASSERT_FALSE(refused.empty());
  EXPECT_EQ(Wait(refused).value("failure_type", ""), "StartFailed");
  const std::string accepted = run(engine_.password);
  ASSERT_FALSE(accepted.empty());
  EXPECT_NE(Wait(refused).value("message", "").find("authentication required"), std::string::npos)
      << Wait(refused).dump();
  EXPECT_EQ(Wait(accepted).value("exit_code", -1), 0) << Wait(accepted).dump();
}

TEST_P(DockerRuntimeTest, OutOfMemoryKillIsReportedAsSuch) {
  auto agent = StartDockerAgent("agent-d");
  WaitForAgent();
  std::string id;
  if (engine_.name == "fake") {
    // The fake reports a SIGKILL it did not send as the kernel's OOM killer's (fake_docker.h).
    id = RunIn(engine_.image, "echo allocating; kill -9 $$");
  } else {
    // The real one: the running container is given a 64 MiB limit (the engine's update call, as
    // `docker update --memory` makes it), then allocates 512 MiB.
    id = RunIn(engine_.image,
               "while [ ! -e go ]; do sleep 0.1; done; echo allocating; "
               "exec python3 -c \"b = bytearray(512 << 20); print(1)\"");
    const nlohmann::json container = RunningContainerOf(id);
    ASSERT_TRUE(container.is_object()) << Log("agent-d.log");
    const nlohmann::json updated =
        EngineCall("POST", "/containers/" + container.value("Id", "") + "/update",
                   {{"Memory", 64 << 20}, {"MemorySwap", 64 << 20}});
    ASSERT_TRUE(updated.is_object() && !updated.contains("message")) << updated;
    std::ofstream(fs::path(container["Config"].value("WorkingDir", "")) / "go").flush();
  }
  nlohmann::json summary = Wait(id);
  EXPECT_EQ(summary.value("exit_code", 0), 137) << summary.dump();
  EXPECT_EQ(summary.value("failure_type", ""), "TaskError");
  EXPECT_NE(summary.value("message", "").find("out of memory"), std::string::npos)
      << summary.dump();
}

TEST_P(DockerRuntimeTest, KillStopsTheContainerThroughTheEngine) {
  auto agent = StartDockerAgent("agent-d");
  WaitForAgent();
  const std::string id =
      RunIn(engine_.image, "trap \"echo got TERM; exit 7\" TERM; echo ready; sleep 30 & wait");
  ASSERT_TRUE(WaitFor("task logs " + id, "ready")) << Log("agent-d.log");
  Det("cmd kill " + id);
  nlohmann::json summary = Wait(id);
  EXPECT_EQ(summary.value("failure_type", ""), "Killed") << summary.dump();
  EXPECT_EQ(summary.value("exit_code", 0), 7);
  EXPECT_NE(Det("task logs " + id).find("got TERM"), std::string::npos);
}

// The agent's service is restarted and takes the agent's processes with it (the pump too): the
// new agent finds the container by its folder and labels and follows it again, losing no line
// and repeating none.
TEST_P(DockerRuntimeTest, RestartedAgentReadoptsItsRunningContainer) {
  auto agent = StartDockerAgent("agent-d");
  WaitForAgent();
  const std::string id =
      RunIn(engine_.image, "for n in $(seq 1 40); do echo \"line $n\"; sleep 0.05; done; exit 4");
  ASSERT_TRUE(WaitFor("task logs " + id, "line 5"));
  agent->Stop(SIGKILL);
  // Every process the agent started: each workload's shim leads a process group of its own.
  for (const auto& entry : fs::directory_iterator(dir_ / "work-agent-d")) {
    auto state = nlohmann::json::parse(
        Log("work-agent-d/" + entry.path().filename().string() + "/workload.json"), nullptr, false);
    if (state.is_object() && state.value("pid", -1) > 1) kill(-state.value("pid", -1), SIGKILL);
  }
  agent = StartDockerAgent("agent-d");
  nlohmann::json summary = Wait(id);
  EXPECT_EQ(summary.value("exit_code", 0), 4) << summary.dump() << Log("agent-d.log");
  std::vector<std::string> texts = LogTexts(id);
  ASSERT_EQ(texts.size(), 40u) << Det("task logs " + id) << Log("agent-d.log");
  for (int n = 1; n <= 40; ++n) EXPECT_EQ(texts[n - 1], "line " + std::to_string(n));
  EXPECT_NE(Log("agent-d.log").find("a new one adopts container"), std::string::npos);
  EXPECT_EQ(ContainersOf(id), nlohmann::json::array());
}

// A container labelled with the agent's id that belongs to no workload of the agent (its folder
// is gone) is removed when the agent starts; another agent's is left alone.
TEST_P(DockerRuntimeTest, OrphanContainersOfTheAgentAreRemovedWhenItStarts) {
  auto create = [&](const std::string& name, const std::string& agent_id) {
    HttpRequest request;
    request.method = "POST";
    request.url = "http://docker/v1.41/containers/create?name=" + name;
    request.unix_socket = engine_.socket;
    request.headers = {{"Content-Type", "application/json"}};
    request.body = nlohmann::json{{"Image", engine_.image},
                                  {"Cmd", {"sleep", "60"}},
                                  {"Labels",
                                   {{"det.agent-id", agent_id},
                                    {"det.allocation-id", "gone.1"},
                                    {"det.task-id", "gone-" + name}}}}
                       .dump();
    auto response = http_.Send(request);
    ASSERT_TRUE(response.ok() && response->status == 201) << response->body;
  };
  RemoveContainersLabelled("det.allocation-id=gone.1");  // a failed run's, on the real engine
  create("det-orphan-" + bus::RandomId().substr(0, 6), "agent-d");
  create("det-other-" + bus::RandomId().substr(0, 6), "agent-elsewhere");
  auto agent = StartDockerAgent("agent-d");
  WaitForAgent();
  ASSERT_TRUE(WaitForLog("agent-d.log", "no workload of this agent runs in it"))
      << Log("agent-d.log");
  const nlohmann::json filters = {{"label", {"det.allocation-id=gone.1"}}};
  const nlohmann::json left =
      EngineCall("GET", "/containers/json?all=1&filters=" + UriEncode(filters.dump(), false));
  ASSERT_TRUE(left.is_array()) << left;
  ASSERT_EQ(left.size(), 1u) << left;
  EXPECT_EQ(left[0]["Labels"].value("det.agent-id", ""), "agent-elsewhere");
  EngineCall("DELETE", "/containers/" + left[0].value("Id", "") + "?force=1");
}

INSTANTIATE_TEST_SUITE_P(Engines, DockerRuntimeTest, ::testing::Values("fake", "real"),
                         [](const auto& info) { return info.param; });

// Trials on a bridge network of the real engine's (not the host's network). The master listens
// on every address and names itself by this host's name, which inside a container is the
// container's own: the trial reaches it only as container_master_host (the bridge's gateway)
// says, through DET_MASTER_URL and DET_MASTER.
class DockerRuntimeBridgeTest : public DockerRuntimeTest {
 protected:
  static constexpr const char* kNetwork = "det-test-bridge";

  std::string BusHost() const override { return "0.0.0.0"; }
  std::string AgentMasterHost() const override { return "127.0.0.1"; }
  void SetUp() override {
    DockerRuntimeTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    // The test's own det reaches the master on loopback, whatever this host's name resolves to.
    const size_t scheme = gateway_.find("://");
    gateway_ = (scheme == std::string::npos ? "" : gateway_.substr(0, scheme + 3)) +
               "127.0.0.1:" + gateway_port_of(gateway_);
  }
  void TearDown() override {
    DockerRuntimeTest::TearDown();  // its containers first: a network in use stays
    EngineCall("DELETE", std::string("/networks/") + kNetwork);
  }
  // Makes the network (the engine picks its subnet); its gateway's address.
  std::string MakeNetwork() {
    EngineCall("DELETE", std::string("/networks/") + kNetwork);  // a killed run's
    const nlohmann::json made =
        EngineCall("POST", "/networks/create", {{"Name", kNetwork}, {"Driver", "bridge"}});
    EXPECT_TRUE(made.contains("Id")) << made;
    const nlohmann::json network = EngineCall("GET", std::string("/networks/") + kNetwork);
    const nlohmann::json ipam = network.is_object() ? network["IPAM"]["Config"] : nullptr;
    return ipam.is_array() && !ipam.empty() ? ipam[0].value("Gateway", "") : "";
  }
};

TEST_P(DockerRuntimeBridgeTest, ATrialOnABridgeNetworkReachesTheMasterAtContainerMasterHost) {
  const std::string gateway = MakeNetwork();
  ASSERT_FALSE(gateway.empty());
  auto agent = StartDockerAgent("agent-d", 2,
                                "docker: {network_mode: " + std::string(kNetwork) +
                                    "}\ncontainer_master_host: " + gateway + "\n");
  const int64_t id = Create(Config("const.yaml", [&](YAML::Node& config) {
    config["environment"]["image"]["cpu"] = engine_.image;
    config["searcher"]["max_length"]["batches"] = 40;
  }));
  ASSERT_GT(id, 0);
  // The trial's container, while it runs: on the bridge, with an address of its own there.
  nlohmann::json running;
  for (int i = 0; i < 1200 && running.is_null(); ++i) {
    const nlohmann::json list = ContainersLabelled("det.agent-id=agent-d");
    if (list.is_array() && !list.empty() && list[0].value("State", "") == "running")
      running = EngineCall("GET", "/containers/" + list[0].value("Id", "") + "/json");
    else
      std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(running.is_object()) << Log("agent-d.log");
  EXPECT_EQ(running["HostConfig"].value("NetworkMode", ""), kNetwork);
  EXPECT_FALSE(running["NetworkSettings"]["Networks"][kNetwork].value("IPAddress", "").empty())
      << running["NetworkSettings"];
  const std::string url = "DET_MASTER_URL=http://" + gateway + ":" + rest_port_;
  EXPECT_NE(running["Config"]["Env"].dump().find(url), std::string::npos)
      << running["Config"]["Env"];
  EXPECT_EQ(WaitEnded(id), "COMPLETED") << Log("agent-d.log") << Log("master.log");
  const nlohmann::json trial = Describe(id)["trials"][0];
  const std::string trial_id = std::to_string(trial.value("id", int64_t{0}));
  ASSERT_FALSE(trial.value("latest_checkpoint", "").empty()) << Det("trial logs " + trial_id);
  EXPECT_TRUE(
      fs::exists(dir_ / "checkpoints" / trial.value("latest_checkpoint", "") / "state.json"));
}

// Only the real engine makes networks (the fake's containers are host processes).
INSTANTIATE_TEST_SUITE_P(Engines, DockerRuntimeBridgeTest, ::testing::Values("real"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace det

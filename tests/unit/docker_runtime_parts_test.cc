// The docker runtime's parts that need no engine: configs (experiment `environment.image` and
// friends, agent `container_runtime`), sizes, the container create body, engine timestamps.
#include <gtest/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include "agent/agent_config.h"
#include "agent/docker/docker_workload.h"
#include "common/clock.h"
#include "common/config.h"
#include "master/experiments/experiment/experiment_config.h"

namespace det {
namespace {

constexpr const char* kExperiment = R"(
entrypoint: python3 train.py
searcher: {name: single, metric: loss, max_length: {batches: 10}}
checkpoint_storage: {type: shared_fs, host_path: /mnt/ckpt}
)";

Result<master::experiment::ExperimentConfig> Experiment(const std::string& extra) {
  return master::experiment::ParseExperimentConfig(YAML::Load(kExperiment + extra));
}

TEST(ByteSizeTest, ReadsBytesAndBinaryUnitsAsDockerDoes) {
  EXPECT_EQ(*ParseByteSize("4294967296"), 4294967296);
  EXPECT_EQ(*ParseByteSize("512M"), 512 * 1024 * 1024);
  EXPECT_EQ(*ParseByteSize("4G"), int64_t{4} << 30);
  EXPECT_EQ(*ParseByteSize("4Gi"), int64_t{4} << 30);
  EXPECT_EQ(*ParseByteSize("1.5GiB"), int64_t{3} << 29);
  for (const char* bad : {"", "G", "4X", "-1G", "four"}) {
    auto parsed = ParseByteSize(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.status().message().find("not a size"), std::string::npos);
  }
}

TEST(ContainerEnvironmentTest, ImageIsANameOrOnePerSlotType) {
  auto one = Experiment(
      "environment: {image: 'pytorch:2', force_pull_image: true}\n"
      "resources: {shm_size: 4G}\n");
  ASSERT_TRUE(one.ok()) << one.status().message();
  EXPECT_EQ(one->container.image, "pytorch:2");
  EXPECT_TRUE(one->container.force_pull_image);
  EXPECT_EQ(one->resources.shm_size, int64_t{4} << 30);
  auto per_type = Experiment("environment: {image: {cpu: 'py:cpu', cuda: 'py:gpu'}}\n");
  ASSERT_TRUE(per_type.ok()) << per_type.status().message();
  bus::ContainerSpec spec;
  spec.images = per_type->container.images;
  EXPECT_EQ(spec.ImageFor("cuda"), "py:gpu");
  EXPECT_EQ(spec.ImageFor("cpu"), "py:cpu");
  EXPECT_EQ(spec.ImageFor(""), "py:cpu");
  spec.images.erase("cuda");
  EXPECT_EQ(spec.ImageFor("cuda"), "py:cpu") << "a cuda workload without its own image";
}

TEST(ContainerEnvironmentTest, BadFieldsAreNamedByTheirPath) {
  const std::pair<const char*, const char*> cases[] = {
      {"environment: {image: {tpu: x}}\n", "environment.image.tpu"},
      {"environment: {image: [a, b]}\n", "environment.image"},
      {"environment: {registry_auth: {user: a}}\n", "environment.registry_auth.user"},
      {"environment: {registry_auth: {password: [1]}}\n", "environment.registry_auth.password"},
      {"resources: {shm_size: lots}\n", "resources.shm_size"},
  };
  for (const auto& [extra, path] : cases) {
    auto parsed = Experiment(extra);
    ASSERT_FALSE(parsed.ok()) << extra;
    EXPECT_NE(parsed.status().message().find(path), std::string::npos)
        << extra << " → " << parsed.status().message();
  }
}

TEST(ContainerEnvironmentTest, RegistryAuthBecomesDockersAuthJson) {
  auto parsed = Experiment(
      "environment: {registry_auth: {username: u, password: p, serveraddress: reg.io}}\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(nlohmann::json::parse(parsed->container.registry_auth_json),
            nlohmann::json({{"username", "u"}, {"password", "p"}, {"serveraddress", "reg.io"}}));
}

TEST(ContainerEnvironmentTest, ReadersOfTheConfigDoNotSeeRegistrySecrets) {
  const std::string config = std::string(kExperiment) +
                             "environment:\n  registry_auth: {username: u, password: hunter2, "
                             "identitytoken: tok-9, serveraddress: reg.io}\n";
  const std::string shown = master::experiment::RedactedConfig(config);
  EXPECT_EQ(shown.find("hunter2"), std::string::npos) << shown;
  EXPECT_EQ(shown.find("tok-9"), std::string::npos) << shown;
  EXPECT_NE(shown.find("reg.io"), std::string::npos) << shown;
  EXPECT_TRUE(master::experiment::ParseExperimentConfig(YAML::Load(shown)).ok())
      << "what is shown still parses";
  const std::string plain = std::string(kExperiment) + "# a comment\n";
  EXPECT_EQ(master::experiment::RedactedConfig(plain), plain) << "no secret: unchanged";
}

// Found in review: with `password` twice, what was shown masked the first and what reached the
// engine was the last. A key given twice is refused wherever it is.
TEST(ContainerEnvironmentTest, ARegistrySecretGivenTwiceIsRefusedNotHalfMasked) {
  const std::string config = std::string(kExperiment) +
                             "environment:\n  registry_auth:\n    username: u\n"
                             "    password: first\n    password: hunter2\n";
  auto parsed = master::experiment::ParseExperimentConfig(YAML::Load(config));
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find(
                "environment.registry_auth: the key \"password\" appears twice"),
            std::string::npos)
      << parsed.status().message();
  EXPECT_EQ(master::experiment::RedactedConfig(config).find("hunter2"), std::string::npos);
}

TEST(AgentRuntimeConfigTest, DockerRuntimeAndItsSocketAreRead) {
  auto config = agent::ParseAgentConfig(YAML::Load(
      "container_runtime: docker\ndocker: {socket: /run/d.sock, network_mode: bridge}\n"));
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->container_runtime, agent::ContainerRuntime::kDocker);
  EXPECT_EQ(config->docker.socket, "/run/d.sock");
  EXPECT_EQ(config->docker.network_mode, "bridge");
  auto defaults = agent::ParseAgentConfig(YAML::Load("agent_id: a\n"));
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->container_runtime, agent::ContainerRuntime::kProcess);
  EXPECT_EQ(defaults->docker.socket, "/var/run/docker.sock");
  auto podman = agent::ParseAgentConfig(YAML::Load("container_runtime: podman\n"));
  ASSERT_FALSE(podman.ok());
  EXPECT_NE(podman.status().message().find("container_runtime"), std::string::npos);
  EXPECT_NE(podman.status().message().find("docker"), std::string::npos);
}

TEST(ContainerCreateBodyTest, CarriesTheWorkloadsImageFolderGpusAndLabels) {
  bus::WorkloadStart start;
  start.allocation_id = "t1.a1";
  start.task_id = "t1";
  start.container.images = {{"cpu", "py:cpu"}, {"cuda", "py:gpu"}};
  start.container.shm_size_bytes = 1 << 30;
  start.container.binds = {"/mnt/ckpt:/mnt/ckpt"};
  agent::ContainerRequest request;
  request.start = &start;
  request.agent_id = "agent-7";
  request.dir = "/work/t1.a1";
  request.argv = {"python3", "train.py"};
  request.env = {"DET_TASK_ID=t1"};
  request.slots = {{"0", "cuda", "A100", "GPU-aaa"}, {"1", "cuda", "A100", "GPU-bbb"}};
  request.network_mode = "host";
  const nlohmann::json body = agent::ContainerCreateBody(request);
  EXPECT_EQ(body["Image"], "py:gpu");
  EXPECT_EQ(body["Cmd"], nlohmann::json({"python3", "train.py"}));
  EXPECT_EQ(body["WorkingDir"], "/work/t1.a1");
  EXPECT_EQ(body["Env"], nlohmann::json({"DET_TASK_ID=t1", "HOME=/work/t1.a1"}));
  EXPECT_EQ(body["User"], std::to_string(getuid()) + ":" + std::to_string(getgid()));
  EXPECT_EQ(body["Labels"]["det.agent-id"], "agent-7");
  EXPECT_EQ(body["Labels"]["det.allocation-id"], "t1.a1");
  EXPECT_EQ(body["Labels"]["det.task-id"], "t1");
  const nlohmann::json& host = body["HostConfig"];
  EXPECT_EQ(host["Binds"], nlohmann::json({"/work/t1.a1:/work/t1.a1", "/mnt/ckpt:/mnt/ckpt"}));
  EXPECT_EQ(host["ShmSize"], 1 << 30);
  EXPECT_EQ(host["NetworkMode"], "host");
  EXPECT_EQ(host["Init"], true);
  EXPECT_EQ(host["DeviceRequests"][0]["Driver"], "nvidia");
  EXPECT_EQ(host["DeviceRequests"][0]["DeviceIDs"], nlohmann::json({"GPU-aaa", "GPU-bbb"}));
  EXPECT_FALSE(host["DeviceRequests"][0].contains("Count")) << "Count and DeviceIDs exclude";
  EXPECT_FALSE(host.contains("GroupAdd"));
  // A task's account: the container's user, with its other groups.
  start.run_as = bus::AgentUserGroup{4242, 4243, "alice", "alices"};
  request.group_add = {"27", "100"};
  const nlohmann::json as_alice = agent::ContainerCreateBody(request);
  EXPECT_EQ(as_alice["User"], "4242:4243");
  EXPECT_EQ(as_alice["HostConfig"]["GroupAdd"], nlohmann::json({"27", "100"}));

  request.slots = {{"cpu0", "cpu", "x86", ""}};
  request.env = {"HOME=/root"};
  const nlohmann::json cpu = agent::ContainerCreateBody(request);
  EXPECT_EQ(cpu["Image"], "py:cpu");
  EXPECT_FALSE(cpu["HostConfig"].contains("DeviceRequests"));
  EXPECT_EQ(cpu["Env"], nlohmann::json({"HOME=/root"})) << "the task's HOME is kept";
}

TEST(DockerWorkloadTest, ContainerJsonRoundTripsAndBadOnesAreNamed) {
  agent::DockerWorkload workload{"/run/d.sock",          "det-a",           "img", true,
                                 "{\"username\":\"u\"}", {{"Image", "img"}}};
  auto read = agent::DockerWorkload::FromJson(workload.ToJson().dump());
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->ToJson(), workload.ToJson());
  for (const char* bad : {"", "[]", "{\"socket\":1}",
                          "{\"socket\":\"s\",\"name\":\"n\",\"image\":"
                          "\"i\",\"create\":[]}"}) {
    auto parsed = agent::DockerWorkload::FromJson(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_NE(parsed.status().message().find("container.json"), std::string::npos);
  }
}

TEST(Rfc3339Test, EngineTimesAreReadAndWrittenToTheNanosecond) {
  EXPECT_EQ(ParseRfc3339Utc("1970-01-01T00:00:01.000000002Z"), 1000000002);
  EXPECT_EQ(ParseRfc3339Utc("2026-11-24T01:02:03.5Z"), 1795482123500000000);
  EXPECT_EQ(ParseRfc3339Utc("2026-11-24T01:02:03Z"), 1795482123000000000);
  for (const char* bad :
       {"", "hello world", "2026-11-24T01:02:03.5+01:00", "2026-11-24", "2026-11-24T01:02:03.Z",
        "2026-11-24T01:02:03.12345678901Z", "2026-11-24T01:02:03.x1Z"}) {
    EXPECT_EQ(ParseRfc3339Utc(bad), std::nullopt) << bad;
  }
  EXPECT_EQ(Rfc3339Utc(1795482123000000001, 9), "2026-11-24T01:02:03.000000001Z");
  EXPECT_EQ(Rfc3339Utc(1795482123500000000, 6), "2026-11-24T01:02:03.500000Z");
  EXPECT_EQ(Rfc3339Utc(1795482123500000000, 0), "2026-11-24T01:02:03Z");
  EXPECT_EQ(ParseRfc3339Utc(Rfc3339Utc(1795482123123456789, 9)), 1795482123123456789);
}

}  // namespace
}  // namespace det

// The fake Docker Engine checked with the real `docker` CLI (Debian package docker.io, which
// scripts/install-deps.sh installs without starting its engine): version negotiation, pull
// (progress, a refused image), run -d, wait, logs, ps by label, inspect, rm -f work against it
// as against the engine.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/testing/cluster_fixture.h"

namespace det {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class FakeDockerCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (testing::Shell("command -v docker").empty()) {
      GTEST_SKIP()
          << "the docker CLI is needed (Debian package docker.io: scripts/install-deps.sh)";
    }
    dir_ = fs::path("/tmp") / ("det-fd-cli-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "config");
    socket_ = (dir_ / "docker.sock").string();
    fake_ = std::make_unique<testing::Process>(
        std::vector<std::string>{testing::BuildDir() + "/tests/fake-docker", "--socket", socket_,
                                 "--pullable", "busybox:1.36", "--pull-delay-ms", "1"},
        dir_ / "fake-docker.log");
    for (int i = 0; i < 100 && !fs::exists(socket_); ++i) std::this_thread::sleep_for(50ms);
    ASSERT_TRUE(fs::exists(socket_)) << "fake-docker did not start";
  }
  void TearDown() override {
    if (fake_) fake_->Stop(SIGTERM);
    fs::remove_all(dir_);
  }
  // docker ARGS against the fake; stdout and stderr together, then "rc=N".
  std::string Docker(const std::string& args) {
    return testing::Shell("DOCKER_HOST=unix://" + socket_ +
                          " DOCKER_CONFIG=" + (dir_ / "config").string() + " timeout 30 docker " +
                          args + " 2>&1; echo rc=$?");
  }

  fs::path dir_;
  std::string socket_;
  std::unique_ptr<testing::Process> fake_;
};

TEST_F(FakeDockerCliTest, VersionIsNegotiatedAndPullsSucceedOrAreRefused) {
  const std::string version = Docker("version --format '{{.Server.APIVersion}}'");
  EXPECT_NE(version.find("1.47"), std::string::npos) << version;
  EXPECT_NE(version.find("rc=0"), std::string::npos) << version;
  const std::string pulled = Docker("pull busybox:1.36");
  EXPECT_NE(pulled.find("Downloaded newer image for busybox:1.36"), std::string::npos) << pulled;
  EXPECT_NE(pulled.find("rc=0"), std::string::npos) << pulled;
  const std::string again = Docker("pull busybox:1.36");
  EXPECT_NE(again.find("Image is up to date"), std::string::npos) << again;
  const std::string refused = Docker("pull det-test/absent:1");
  EXPECT_NE(refused.find("pull access denied for det-test/absent"), std::string::npos) << refused;
  EXPECT_EQ(refused.find("rc=0"), std::string::npos) << refused;
}

TEST_F(FakeDockerCliTest, ContainersRunWaitLogListInspectAndAreRemoved) {
  ASSERT_NE(Docker("pull busybox:1.36").find("rc=0"), std::string::npos);
  const std::string run = Docker(
      "run -d --name t1 --label det.test=1 busybox:1.36 /bin/sh -c "
      "'echo hello; echo oops >&2; sleep 0.2; exit 3'");
  ASSERT_NE(run.find("rc=0"), std::string::npos) << run;
  EXPECT_NE(Docker("wait t1").find("3\nrc=0"), std::string::npos);
  const std::string logs = Docker("logs t1");
  EXPECT_NE(logs.find("hello"), std::string::npos) << logs;
  EXPECT_NE(logs.find("oops"), std::string::npos) << logs;
  const std::string listed = Docker("ps -a --filter label=det.test=1 --format '{{.Names}}'");
  EXPECT_NE(listed.find("t1\nrc=0"), std::string::npos) << listed;
  EXPECT_EQ(Docker("ps --format '{{.Names}}'"), "rc=0\n") << "without -a: running ones only";
  const std::string inspected = Docker("inspect t1");
  const auto state =
      nlohmann::json::parse(inspected.substr(0, inspected.rfind("rc=")), nullptr, false);
  ASSERT_TRUE(state.is_array() && state.size() == 1) << inspected;
  EXPECT_EQ(state[0]["State"].value("ExitCode", -1), 3);
  EXPECT_EQ(state[0]["State"].value("Status", ""), "exited");
  EXPECT_EQ(state[0]["Config"]["Labels"].value("det.test", ""), "1");
  EXPECT_NE(Docker("rm -f t1").find("rc=0"), std::string::npos);
  EXPECT_EQ(Docker("inspect t1").find("rc=0"), std::string::npos) << "removed";
}

TEST_F(FakeDockerCliTest, StopEndsARunningContainerAndNameConflictsAreRefused) {
  ASSERT_NE(Docker("pull busybox:1.36").find("rc=0"), std::string::npos);
  ASSERT_NE(Docker("run -d --name t2 busybox:1.36 sleep 60").find("rc=0"), std::string::npos);
  const std::string conflict = Docker("create --name t2 busybox:1.36 true");
  EXPECT_NE(conflict.find("is already in use"), std::string::npos) << conflict;
  EXPECT_NE(Docker("stop -t 1 t2").find("rc=0"), std::string::npos);
  const std::string inspected =
      Docker("inspect t2 --format '{{.State.Status}} {{.State.ExitCode}}'");
  EXPECT_NE(inspected.find("exited 143"), std::string::npos) << inspected;
  const std::string killed = Docker("kill t2");
  EXPECT_NE(killed.find("is not running"), std::string::npos) << killed;
}

}  // namespace
}  // namespace det

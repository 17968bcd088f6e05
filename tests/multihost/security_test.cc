// Who gets in, over separate hosts (multihost_fixture.h): CURVE on every bus port, each key on the
// ports of its role only; plaintext refused; secrets kept out of every log.
#include "bus/security.h"

#include <thread>

#include "tests/multihost/multihost_fixture.h"

namespace det::testing {
namespace {

using namespace std::chrono_literals;

class SecurityTest : public MultiHostTest {
 protected:
  // How many times `host`'s agent has logged closing an open key or config file.
  size_t LinesClosingFiles(const std::string& host) {
    const std::string log = ReadLog(host + ".log");
    const std::string line = "now 0600, as tasks run on this host";
    size_t count = 0;
    for (size_t at = log.find(line); at != std::string::npos; at = log.find(line, at + 1)) ++count;
    return count;
  }
  // An agent on the spare host `intruder` with `key_file` ("agent.key" is the real one).
  void StartIntruderAgent(const std::string& key_file) {
    const fs::path config = dir_ / "intruder.yaml";
    std::ofstream(config) << "master_host: " << Host("master").address
                          << "\nagent_id: intruder\nartificial_slots: 4\nwork_dir: "
                          << (dir_ / "work" / "intruder").string()
                          << "\nagent_reconnect_attempts: 2\nagent_reconnect_backoff: 1s"
                          << "\nsecurity:\n  key_file: " << (dir_ / key_file).string()
                          << "\n  server_public_key_file: " << (dir_ / "master.pub").string()
                          << "\n";
    intruder_ = std::make_unique<Process>(
        net_->On("intruder", {BuildDir() + "/agent/det-agent", "-c", config.string()}),
        dir_ / "intruder.log");
  }
  // det-autoscaler on `intruder` with `key_file`, until the returned process goes.
  std::unique_ptr<Process> StartIntruderAutoscaler(const std::string& key_file) {
    std::ofstream(dir_ / "intruder-autoscaler.yaml")
        << "master_host: " << Host("master").address
        << "\nsecurity:\n  key_file: " << (dir_ / key_file).string()
        << "\n  server_public_key_file: " << (dir_ / "master.pub").string() << "\n";
    return std::make_unique<Process>(
        net_->On("intruder", {BuildDir() + "/autoscaler/det-autoscaler", "-c",
                              (dir_ / "intruder-autoscaler.yaml").string()}),
        dir_ / "intruder-autoscaler.log");
  }
  bool IntruderListed() {
    auto agents = Rest("GET", "/api/v1/agents");
    for (const auto& agent : agents.value("agents", nlohmann::json::array())) {
      if (agent.value("id", "") == "intruder") return true;
    }
    return false;
  }
  void MakeKey(const std::string& name) {
    auto keys = bus::GenerateCurveKeyPair();
    ASSERT_TRUE(keys.ok());
    ASSERT_TRUE(bus::WriteKeyPairFiles(*keys, (dir_ / name).string()).ok());
  }
  std::unique_ptr<Process> intruder_;
};

TEST_F(SecurityTest, AnAgentWithAnUnknownKeyIsRefused) {
  ASSERT_NO_FATAL_FAILURE(MakeKey("stranger"));
  StartIntruderAgent("stranger.key");
  EXPECT_TRUE(Eventually(
      [&] { return ReadLog("master.log").find("unknown CURVE key") != std::string::npos; }, 10s))
      << ReadLog("master.log");
  EXPECT_FALSE(IntruderListed());
}

TEST_F(SecurityTest, ACliUsersKeyCannotJoinAsAnAgent) {
  StartIntruderAgent("cli.key");
  EXPECT_TRUE(Eventually(
      [&] { return ReadLog("master.log").find("may not use the agent port") != std::string::npos; },
      10s))
      << ReadLog("master.log");
  std::this_thread::sleep_for(2s);
  EXPECT_FALSE(IntruderListed());
}

TEST_F(SecurityTest, AnAutoscalerWithAnUnknownKeyCannotReadTheEventBus) {
  ASSERT_NO_FATAL_FAILURE(MakeKey("stranger"));
  auto autoscaler = StartIntruderAutoscaler("stranger.key");
  EXPECT_TRUE(Eventually(
      [&] { return ReadLog("master.log").find("unknown CURVE key") != std::string::npos; }, 10s))
      << ReadLog("master.log");
}

TEST_F(SecurityTest, AnAgentsKeyCannotReadTheEventBus) {
  auto autoscaler = StartIntruderAutoscaler("agent.key");
  EXPECT_TRUE(Eventually(
      [&] {
        return ReadLog("master.log").find("may not use the autoscaler port") != std::string::npos;
      },
      10s))
      << ReadLog("master.log");
}

// A client whose keys do not fit the master is told which way within a second, not "no reply"
// after its retries (regression: `det --plaintext master info` waited 9 s and said the master was
// unreachable), and the master serves those who hold keys as before.
TEST_F(SecurityTest, ClientsWithKeysThatDoNotFitAreToldWhyAtOnce) {
  const std::string det = "ip netns exec " + Host("client").netns + " timeout 30 " + BuildDir() +
                          "/cli/det -m tcp://" + Host("master").address + ":8090 ";
  const std::string plaintext = Shell(det + "--plaintext master info 2>&1; echo rc=$?");
  EXPECT_NE(plaintext.find("requires CURVE keys"), std::string::npos) << plaintext;
  EXPECT_NE(plaintext.find("DET_MASTER=http"), std::string::npos) << plaintext;
  EXPECT_NE(plaintext.find("rc=1"), std::string::npos) << plaintext;

  const std::string wrong_master_key =
      Shell(det + "--key-file " + (dir_ / "cli.key").string() + " --master-key-file " +
            (dir_ / "cli.pub").string() + " master info 2>&1");
  EXPECT_NE(wrong_master_key.find("its public key does not match"), std::string::npos)
      << wrong_master_key;

  // A key nobody listed gets into the gateway (bus.security.cli_keys: any, the default), but only
  // as far as the master's info: everything else needs a login.
  const std::string stranger = (dir_ / "stranger").string();
  ASSERT_TRUE(bus::WriteKeyPairFiles(*bus::GenerateCurveKeyPair(), stranger).ok());
  const std::string as_stranger = det + "--key-file " + stranger + ".key --master-key-file " +
                                  (dir_ / "master.pub").string() + " ";
  const std::string stranger_info = Shell(as_stranger + "master info 2>&1");
  EXPECT_NE(stranger_info.find("0.1.0"), std::string::npos) << stranger_info;
  const std::string stranger_list = Shell(as_stranger + "experiment list 2>&1");
  EXPECT_NE(stranger_list.find("not logged in"), std::string::npos) << stranger_list;
  EXPECT_NE(Det("master info").find("0.1.0"), std::string::npos);
}

// A user with only the master's URL and a password, on a host that has nothing of the cluster
// (issue 53): the admin creates the account; on the client host, with a home of its own and no
// key file, the user is refused everything but the master's info until logged in, then logs in
// and creates, lists and reads the logs of an experiment, over CURVE with a key det made itself.
TEST_F(SecurityTest, AUserWithOnlyTheUrlAndAPasswordRunsAnExperiment) {
  const std::string created =
      Shell("printf '%s\\n' carol-password | ip netns exec " + Host("client").netns +
            " env DET_USER=admin DET_PASS=" + kAdminPassword +
            " DET_AUTH_FILE=" + (dir_ / "auth.json").string() + " timeout 120 " + BuildDir() +
            "/cli/det -m tcp://" + Host("master").address + ":8090 --key-file " +
            (dir_ / "cli.key").string() + " --master-key-file " + (dir_ / "master.pub").string() +
            " user create carol 2>&1; echo rc=$?");
  ASSERT_NE(created.find("rc=0"), std::string::npos) << created;
  const fs::path home = dir_ / "carol-home";
  fs::create_directories(home);
  const std::string url = "http://" + Host("master").address + ":8080";
  auto as_carol = [&](const std::string& args, const std::string& input = "") {
    return Shell((input.empty() ? "" : "printf '%s\\n' " + input + " | ") + "ip netns exec " +
                 Host("client").netns + " env -i PATH=/usr/bin:/bin HOME=" + home.string() +
                 " DET_MASTER=" + url + " DET_RELAY=0 timeout 120 " + BuildDir() + "/cli/det " +
                 args + " 2>&1; echo rc=$?");
  };
  const std::string anonymous = as_carol("experiment list");
  EXPECT_NE(anonymous.find("not logged in"), std::string::npos) << anonymous;
  EXPECT_NE(as_carol("master info").find("rc=0"), std::string::npos);
  const std::string login = as_carol("user login carol", "carol-password");
  ASSERT_NE(login.find("rc=0"), std::string::npos) << login;
  EXPECT_TRUE(fs::exists(home / ".config" / "det" / "client.key")) << "det made its own key";

  nlohmann::json config = {
      {"name", "carol-from-a-url"},
      {"entrypoint", "python3 train.py"},
      {"hyperparameters", {{"learning_rate", 0.1}, {"batch_size", 16}, {"step_seconds", 0.01}}},
      {"searcher",
       {{"name", "single"}, {"metric", "validation_loss"}, {"max_length", {{"batches", 20}}}}},
      {"min_validation_period", {{"batches", 10}}},
      {"checkpoint_storage",
       {{"type", "shared_fs"}, {"host_path", (dir_ / "checkpoints").string()}}}};
  const fs::path path = dir_ / "carol.yaml";
  std::ofstream(path) << config.dump(2);
  const std::string submitted = as_carol("--json experiment create " + path.string() + " " +
                                         SourceDir() + "/examples/linear_regression");
  const auto reply =
      nlohmann::json::parse(submitted.substr(0, submitted.rfind("rc=")), nullptr, false);
  ASSERT_TRUE(reply.is_object()) << submitted;
  const int64_t id = reply.value("id", int64_t{0});
  EXPECT_EQ(WaitEnded(id), "COMPLETED") << ReadLog("master.log");
  const std::string listed = as_carol("experiment list");
  EXPECT_NE(listed.find("carol-from-a-url"), std::string::npos) << listed;
  EXPECT_NE(listed.find("carol"), std::string::npos) << "the owner: " << listed;
  const std::string logs = as_carol("experiment logs " + std::to_string(id));
  EXPECT_NE(logs.find("rc=0"), std::string::npos) << logs;
  EXPECT_NE(logs.find("done at step 20"), std::string::npos) << logs;
}

// A task on an agent host reads none of the agent's secrets: a root agent runs it as `nobody`
// and, at start, closes its key and config to 0600 when an operator left them open.
TEST_F(SecurityTest, ATaskCannotReadTheAgentsKeyOrConfig) {
  const std::string host = AgentHost(1);
  const fs::path key = dir_ / "agent.key", config = dir_ / (host + ".yaml");
  fs::permissions(key, fs::perms(0644));
  fs::permissions(config, fs::perms(0644));
  agents_[host]->Stop();
  // The log appends: a line the first start wrote must not stand for this start's.
  const size_t lines_before = LinesClosingFiles(host);
  StartAgent(host);
  ASSERT_TRUE(Eventually([&] { return LinesClosingFiles(host) >= lines_before + 2; }, 30s))
      << ReadLog(host + ".log");
  EXPECT_EQ(fs::status(key).permissions(), fs::perms(0600));
  EXPECT_EQ(fs::status(config).permissions(), fs::perms(0600));

  auto run =
      nlohmann::json::parse(Det("--json cmd run 'id -u; cat " + key.string() +
                                "; echo key=$?; cat " + config.string() + "; echo config=$?'"),
                            nullptr, false);
  ASSERT_TRUE(run.is_object()) << run.dump();
  const std::string task = run.value("task_id", "");
  Det("task wait " + task);
  const std::string logs = Det("task logs " + task);
  EXPECT_NE(logs.find("65534"), std::string::npos) << logs;
  EXPECT_NE(logs.find("key=1"), std::string::npos) << logs;
  EXPECT_NE(logs.find("config=1"), std::string::npos) << logs;
  EXPECT_EQ(logs.find("secret_key"), std::string::npos) << logs;
  EXPECT_EQ(logs.find("master_host"), std::string::npos) << logs;
}

}  // namespace
}  // namespace det::testing

// Whom tasks run as on agents: a user linked to an account (`det user link-with-agent-user`, or
// Determined's agentUserGroup over REST) runs as it; a user not linked, as security.default_task.
// What each account may reach: its own folders, never root's files nor another account's.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/testing/experiment_fixture.h"
#include "tests/testing/rest_client.h"
#include "tests/testing/test_util.h"

namespace det {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using testing::Shell;

constexpr const char* kAlicesPassword = "alice-password-1";
constexpr const char* kBobsPassword = "bob-password-1";

class AgentAccountTest : public testing::ExperimentFixture {
 protected:
  std::string ExtraSecurityConfig() const override {
    return "  default_task: {user: nobody, uid: 65534, group: nogroup, gid: 65534}\n";
  }
  void SetUp() override {
    ExperimentFixture::SetUp();
    // The test's folder is one anyone passes through (as a cluster folder is); its master.yaml,
    // which holds the database's password, the operator's only (as det deploy local writes it).
    fs::permissions(dir_, fs::perms(0711));
    fs::permissions(dir_ / "master.yaml", fs::perms(0600));
  }
  testing::RestAnswer Send(const std::string& method, const std::string& path,
                           const std::string& token, const std::string& body = "") {
    return testing::RestClient(std::stoi(rest_port_)).Send(method, path, token, body);
  }
  std::string Login(const std::string& user, const std::string& password) {
    return testing::RestClient(std::stoi(rest_port_)).Login(user, password);
  }
  // Runs `command` as `user` and answers its output once it ended.
  std::string RunToEnd(const std::string& user, const std::string& password,
                       const std::string& command) {
    const std::string id = RunAs(user, password, command);
    if (id.empty()) return "no task";
    DetAs(user, password, "task wait " + id);
    return DetAs(user, password, "task logs " + id);
  }
  // An experiment of `user`'s: the example's const.yaml, checkpoints in the test's folder.
  int64_t CreateAs(const std::string& user, const std::string& password, double step_seconds) {
    const std::string config = Config(
        "const.yaml", [&](YAML::Node& c) { c["hyperparameters"]["step_seconds"] = step_seconds; });
    const std::string out =
        DetAs(user, password, "--json experiment create " + config + " " + Example());
    auto reply = nlohmann::json::parse(out, nullptr, false);
    EXPECT_TRUE(reply.is_object()) << out;
    return reply.is_object() ? reply.value("id", int64_t{0}) : 0;
  }
  bool Gone(int64_t id) {
    return testing::Eventually(
        [&] {
          return Det("experiment describe " + std::to_string(id)).find("not found") !=
                 std::string::npos;
        },
        60s);
  }
  // The checkpoint folders now in the test's checkpoint storage.
  std::vector<fs::path> Checkpoints() {
    std::vector<fs::path> found;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir_ / "checkpoints", ec)) {
      found.push_back(entry.path());
    }
    return found;
  }
};

TEST_F(AgentAccountTest, TasksRunAsTheirSubmittersAccountAndReadNothingOfRoot) {
  if (geteuid() != 0) GTEST_SKIP() << "an agent switches users only as root; this test is not root";
  auto agent = StartAgent("agent-1");
  ASSERT_NE(CreateUser("alice", kAlicesPassword).find("rc=0"), std::string::npos);
  ASSERT_NE(CreateUser("bob", kBobsPassword).find("rc=0"), std::string::npos);
  // A file only root may read, in a folder anyone may pass through.
  const std::string secret = (dir_ / "secret").string();
  std::ofstream(secret) << "the cluster's secret\n";
  std::filesystem::permissions(secret, std::filesystem::perms(0600));
  // A task before the link reads (and the master caches) alice's account: none, so nobody's.
  const std::string before = RunToEnd("alice", kAlicesPassword, "echo before=$(id -u)");
  EXPECT_NE(before.find("before=65534"), std::string::npos) << before;

  const std::string linked =
      Det("user link-with-agent-user alice --agent-uid 4242 --agent-gid 4243 --agent-user alice "
          "--agent-group alices");
  EXPECT_NE(linked.find("linked alice (uid 4242, gid 4243) on agents to \"alice\""),
            std::string::npos)
      << linked;
  EXPECT_NE(Det("user list").find("alice (4242:4243)"), std::string::npos) << Det("user list");
  EXPECT_NE(DetAs("alice", kAlicesPassword,
                  "user link-with-agent-user alice --agent-uid 0 --agent-gid 0 --agent-user root "
                  "--agent-group root")
                .find("only an admin"),
            std::string::npos);
  // Not even an admin links anyone to root unless master.yaml allows root tasks.
  const std::string to_root =
      Det("user link-with-agent-user bob --agent-uid 0 --agent-gid 0 --agent-user root "
          "--agent-group root");
  EXPECT_NE(to_root.find("security.allow_root_tasks: true"), std::string::npos) << to_root;

  const std::string alice =
      RunToEnd("alice", kAlicesPassword,
               "echo uid=$(id -u) gid=$(id -g) groups=$(id -G) user=$USER; cat " + secret +
                   "; echo cat=$?; touch mine && echo wrote=$?");
  EXPECT_NE(alice.find("uid=4242 gid=4243 groups=4243 user=alice"), std::string::npos) << alice;
  EXPECT_NE(alice.find("Permission denied"), std::string::npos) << alice;
  EXPECT_EQ(alice.find("the cluster's secret"), std::string::npos) << alice;
  EXPECT_NE(alice.find("cat=1"), std::string::npos) << alice;
  EXPECT_NE(alice.find("wrote=0"), std::string::npos) << alice;  // its own folder is its own

  // Another account's running task: its folder is its own (0700), as is what it writes there.
  const std::string bobs_task =
      RunAs("bob", kBobsPassword, "echo bobs-note > note; echo dir=$PWD; sleep 60");
  const std::string bobs_dir = WaitForOutput("bob", kBobsPassword, bobs_task, "dir=");
  ASSERT_FALSE(bobs_dir.empty()) << DetAs("bob", kBobsPassword, "task logs " + bobs_task);
  const std::string prying =
      RunToEnd("alice", kAlicesPassword,
               "cat " + bobs_dir + "/note; echo note=$?; ls " + bobs_dir +
                   "; echo list=$?; head -1 " + (dir_ / "master.yaml").string() +
                   "; echo yaml=$?; ls " + (dir_ / "work-agent-1").string() + "; echo work=$?");
  EXPECT_EQ(prying.find("bobs-note"), std::string::npos) << prying;
  EXPECT_EQ(prying.find("db:"), std::string::npos) << prying;
  for (const char* failed : {"note=1", "list=2", "yaml=1", "work=2"}) {
    EXPECT_NE(prying.find(failed), std::string::npos) << failed << "\n" << prying;
  }
  DetAs("bob", kBobsPassword, "task kill " + bobs_task);

  // Not linked: the cluster's default_task.
  const std::string bob = RunToEnd("bob", kBobsPassword, "echo uid=$(id -u) gid=$(id -g)");
  EXPECT_NE(bob.find("uid=65534 gid=65534"), std::string::npos) << bob;

  // Determined's REST form links bob; the user answer shows it under Determined's names.
  const std::string admin = Login("admin", testing::kAdminPassword);
  const std::string bob_path =
      "/api/v1/users/" +
      std::to_string(
          Send("GET", "/api/v1/users/bob/by-username", admin).body["user"].value("id", 0));
  const auto patched = Send("PATCH", bob_path, admin,
                            R"({"agentUserGroup": {"agentUid": 5000, "agentGid": 5001,)"
                            R"( "agentUser": "bob", "agentGroup": "bobs"}})");
  EXPECT_EQ(patched.status, 200) << patched.text;
  EXPECT_NE(patched.text.find(R"("agentUserGroup":{"agentUid":5000,"agentGid":5001,)"
                              R"("agentUser":"bob","agentGroup":"bobs"})"),
            std::string::npos)
      << patched.text;
  const auto bad = Send("PATCH", bob_path, admin,
                        R"({"agentUserGroup": {"agentUid": 5000, "agentGid": 5001,)"
                        R"( "agentUser": "bob;rm", "agentGroup": "bobs"}})");
  EXPECT_EQ(bad.status, 400) << bad.text;
  EXPECT_NE(bad.text.find("agent user"), std::string::npos) << bad.text;
  const std::string relinked = RunToEnd("bob", kBobsPassword, "echo uid=$(id -u) gid=$(id -g)");
  EXPECT_NE(relinked.find("uid=5000 gid=5001"), std::string::npos) << relinked;
}

// An experiment's trial runs, checkpoints, resumes and is removed as its owner's account: the
// checkpoint folders are the owner's alone (others neither read nor remove them), and garbage
// collection runs as the owner too, so it removes only what the owner may.
TEST_F(AgentAccountTest, CheckpointsAreTheOwnersAndAreRemovedAsTheOwner) {
  if (geteuid() != 0) GTEST_SKIP() << "an agent switches users only as root; this test is not root";
  auto agent = StartAgent("agent-1");
  ASSERT_NE(CreateUser("alice", kAlicesPassword).find("rc=0"), std::string::npos);
  ASSERT_NE(CreateUser("bob", kBobsPassword).find("rc=0"), std::string::npos);
  Det("user link-with-agent-user alice --agent-uid 4242 --agent-gid 4243 --agent-user alice "
      "--agent-group alices");

  const int64_t id = CreateAs("alice", kAlicesPassword, 0.02);
  ASSERT_TRUE(WaitForTrial(id, [](auto& t) { return t.value("steps_completed", 0) >= 40; }))
      << Describe(id).dump()
      << Det("trial logs " + std::to_string(Describe(id)["trials"][0].value("id", int64_t{0})));
  EXPECT_NE(
      DetAs("alice", kAlicesPassword, "experiment pause " + std::to_string(id)).find("PAUSED"),
      std::string::npos);
  ASSERT_TRUE(WaitForTrial(id, [](auto& t) { return t.value("task_state", "") == ""; }));
  // The storage folder is open to every account, sticky; each checkpoint is its writer's only.
  struct stat folder {};
  ASSERT_EQ(stat((dir_ / "checkpoints").c_str(), &folder), 0);
  EXPECT_EQ(folder.st_mode & 07777, 01777u);
  const std::vector<fs::path> paused = Checkpoints();
  ASSERT_FALSE(paused.empty()) << Log("agent-1.log");
  for (const fs::path& checkpoint : paused) {
    struct stat st {};
    ASSERT_EQ(stat(checkpoint.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 4242u) << checkpoint;
    EXPECT_EQ(st.st_mode & 077, 0u) << checkpoint << " is open to others";
  }
  const std::string target = paused.front().string();
  const std::string bob =
      RunToEnd("bob", kBobsPassword,
               "ls " + target + "; echo list=$?; rm -rf " + target + "; echo remove=$?; mv " +
                   target + " " + target + ".moved; echo move=$?");
  for (const char* failed : {"list=2", "remove=1", "move=1"}) {
    EXPECT_NE(bob.find(failed), std::string::npos) << failed << "\n" << bob;
  }
  EXPECT_TRUE(fs::exists(target));

  EXPECT_NE(
      DetAs("alice", kAlicesPassword, "experiment activate " + std::to_string(id)).find("ACTIVE"),
      std::string::npos);
  EXPECT_EQ(WaitEnded(id), "COMPLETED") << Log("master.log");
  const int64_t trial_id = Describe(id)["trials"][0].value("id", int64_t{0});
  const std::string logs = Det("trial logs " + std::to_string(trial_id));
  EXPECT_NE(logs.find("run 2: starting at step "), std::string::npos) << logs;

  // Removed as alice: every folder of hers goes.
  EXPECT_NE(DetAs("alice", kAlicesPassword, "experiment delete --yes " + std::to_string(id))
                .find("DELETING"),
            std::string::npos);
  ASSERT_TRUE(Gone(id)) << Log("master.log");
  EXPECT_TRUE(Checkpoints().empty());

  // What alice may not remove stays, and the deletion says it failed: it ran as alice, not root.
  const int64_t second = CreateAs("alice", kAlicesPassword, 0.001);
  EXPECT_EQ(WaitEnded(second), "COMPLETED") << Log("master.log");
  const std::vector<fs::path> kept = Checkpoints();
  ASSERT_FALSE(kept.empty());
  const fs::path planted = kept.front() / "roots";
  fs::create_directories(planted);
  std::ofstream(planted / "file") << "root's\n";
  DetAs("alice", kAlicesPassword, "experiment delete --yes " + std::to_string(second));
  EXPECT_TRUE(testing::Eventually(
      [&] {
        return Describe(second)["experiment"].dump().find("delete failed") != std::string::npos;
      },
      60s))
      << Describe(second).dump();
  EXPECT_TRUE(fs::exists(planted / "file"));
}

}  // namespace
}  // namespace det

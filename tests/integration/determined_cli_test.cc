// Coming from Determined, part two: Determined 0.38.1's own `det` CLI (`python3 -m
// determined.cli`), unmodified, against a cluster of real processes, as a Determined user points
// it (DET_MASTER=http://host:port, DET_USER/DET_PASS or `det user login`). Each command's output
// is checked against what the master's REST API says, not only its exit code.
//
// The CLI is read in place from ../shared/conformance/determined-0.38.1 (DET_CONFORMANCE_DIR
// overrides); without it, or without the Python packages it imports, the tests skip saying what
// is missing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "tests/testing/cluster_fixture.h"
#include "tests/testing/rest_client.h"
#include "tests/testing/test_util.h"

namespace det {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

fs::path ConformanceDir() {
  return testing::BesideCheckout(DET_SOURCE_DIR_DEFAULT,
                                 fs::path("shared") / "conformance" / "determined-0.38.1",
                                 "DET_CONFORMANCE_DIR");
}

// What the tests need beyond the build, or "" when everything is there.
std::string MissingForDeterminedCli() {
  const fs::path cli = ConformanceDir() / "harness" / "determined" / "cli";
  if (!fs::exists(cli)) {
    return "Determined's CLI is not at " + cli.string() +
           " (../shared/conformance beside the checkout, or DET_CONFORMANCE_DIR)";
  }
  const std::string probe = "PYTHONPATH=" + (ConformanceDir() / "harness").string() +
                            " /usr/bin/python3 -c 'import determined.cli.cli' >/dev/null 2>&1";
  if (std::system(probe.c_str()) != 0) {
    return "/usr/bin/python3 cannot import determined.cli with its packages (python3-requests, "
           "python3-termcolor, python3-tabulate, ...: ../shared/conformance/README.md; "
           "scripts/install-deps.sh installs them)";
  }
  return "";
}

class DeterminedCliTest : public testing::ClusterProcessTest {
 protected:
  void SetUp() override {
    if (std::string missing = MissingForDeterminedCli(); !missing.empty()) {
      GTEST_SKIP() << "needs " << missing;
    }
    ClusterProcessTest::SetUp();
    fs::create_directories(dir_ / "home");
    rest_ = std::make_unique<testing::RestClient>(std::stoi(rest_port_));
    admin_ = rest_->Login("admin", testing::kAdminPassword);
    ASSERT_FALSE(admin_.empty());
  }

  // Determined's CLI with `args`, as admin through DET_USER/DET_PASS unless `as_admin` is false
  // (then the token store in the test's HOME speaks, as after `det user login`); `input` on its
  // standard input, without a terminal (setsid: getpass reads it). Output and errors together,
  // then "rc=N".
  std::string Determined(const std::string& args, const std::string& input = "",
                         bool as_admin = true) {
    const fs::path in = dir_ / "determined-input";
    std::ofstream(in) << input;
    const std::string credentials =
        as_admin ? " DET_USER=admin DET_PASS=" + std::string(testing::kAdminPassword) : "";
    return testing::Shell("{ env -u DET_USER -u DET_PASS HOME=" + (dir_ / "home").string() +
                          " PYTHONPATH=" + (ConformanceDir() / "harness").string() +
                          " DET_MASTER=http://127.0.0.1:" + rest_port_ + credentials +
                          " setsid timeout 120 /usr/bin/python3 -m determined.cli " + args + " < " +
                          in.string() + "; echo rc=$?; } 2>&1");
  }
  testing::RestAnswer Send(const std::string& method, const std::string& path,
                           const std::string& body = "") {
    return rest_->Send(method, path, admin_, body);
  }

  std::unique_ptr<testing::RestClient> rest_;
  std::string admin_;
};

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_F(DeterminedCliTest, MasterInfoLoginWhoamiAndUsers) {
  const std::string cluster_id = Send("GET", "/api/v1/master").body.value("clusterId", "");
  ASSERT_FALSE(cluster_id.empty());
  const std::string info = Determined("master info");
  EXPECT_TRUE(Has(info, "clusterId: " + cluster_id)) << info;
  EXPECT_TRUE(Has(info, "rc=0")) << info;

  // `det user login`: its salted digest of the password, then the token it keeps serves.
  const std::string wrong = Determined("user login admin", "not-the-password\n", false);
  EXPECT_FALSE(Has(wrong, "rc=0")) << wrong;
  const std::string login =
      Determined("user login admin", std::string(testing::kAdminPassword) + "\n", false);
  EXPECT_TRUE(Has(login, "rc=0")) << login;
  const std::string whoami = Determined("user whoami", "", false);
  EXPECT_TRUE(Has(whoami, "You are logged in as user 'admin'")) << whoami;

  ASSERT_EQ(Send("POST", "/api/v1/users",
                 R"({"user":{"username":"alice"},"password":"alice-password-1"})")
                .status,
            200);
  const std::string users = Determined("user list");
  EXPECT_TRUE(Has(users, " admin ")) << users;
  EXPECT_TRUE(Has(users, " alice ")) << users;
  // Users Determined's CLI makes log in with a plain password here (and the other way round).
  const std::string created = Determined("user create bob --password Bob-password-1");
  EXPECT_TRUE(Has(created, "rc=0")) << created;
  EXPECT_FALSE(rest_->Login("bob", "Bob-password-1").empty()) << created;
}

TEST_F(DeterminedCliTest, AgentsSlotsCommandsTasksAndJobs) {
  auto agent = StartAgent("determined-cli-agent", 2);
  ASSERT_TRUE(testing::Eventually(
      [&] { return Send("GET", "/api/v1/agents").body["agents"].size() == 1; }, 10s));
  const std::string agents = Determined("agent list");
  EXPECT_TRUE(Has(agents, "determined-cli-agent")) << agents;
  EXPECT_TRUE(Has(agents, "| default ")) << agents;

  // `det cmd run` follows the command's log to its end.
  const std::string ran = Determined("cmd run 'echo hello-from-determined'");
  EXPECT_TRUE(Has(ran, "\nhello-from-determined\n")) << ran;
  EXPECT_TRUE(Has(ran, "rc=0")) << ran;
  const nlohmann::json commands = Send("GET", "/api/v1/commands").body["commands"];
  ASSERT_EQ(commands.size(), 1u) << commands.dump();
  const std::string echoed = commands[0].value("id", "");
  const std::string listed = Determined("cmd list");
  EXPECT_TRUE(Has(listed, echoed)) << listed;
  EXPECT_TRUE(Has(listed, "TERMINATED")) << listed;
  const std::string logs = Determined("task logs " + echoed);
  EXPECT_TRUE(Has(logs, "hello-from-determined\n")) << logs;

  // A running command: on a slot, in the task list and the job queue, then killed.
  const std::string detached = Determined("cmd run -d 'sleep 60'");
  ASSERT_TRUE(Has(detached, "rc=0")) << detached;
  std::smatch uuid;
  ASSERT_TRUE(
      std::regex_search(detached, uuid, std::regex("[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}")))
      << detached;
  const std::string sleeping = uuid.str();
  ASSERT_TRUE(testing::Eventually(
      [&] {
        return Send("GET", "/api/v1/commands/" + sleeping).body["command"].value("state", "") ==
               "STATE_RUNNING";
      },
      15s))
      << detached;
  const nlohmann::json running = Send("GET", "/api/v1/tasks").body["allocationIdToSummary"];
  ASSERT_EQ(running.size(), 1u) << running.dump();
  const std::string allocation = running.begin().key();
  const std::string slots = Determined("slot list");
  EXPECT_TRUE(Has(slots, allocation)) << slots;
  EXPECT_TRUE(Has(slots, "FREE")) << slots;
  const std::string tasks = Determined("task list");
  EXPECT_TRUE(Has(tasks, sleeping)) << tasks;
  EXPECT_TRUE(Has(tasks, "determined-cli-agent")) << tasks;
  const std::string jobs = Determined("job list");
  EXPECT_TRUE(Has(jobs, sleeping)) << jobs;
  EXPECT_TRUE(Has(jobs, "admin")) << jobs;
  const std::string killed = Determined("cmd kill " + sleeping);
  EXPECT_TRUE(Has(killed, "rc=0")) << killed;
  EXPECT_TRUE(testing::Eventually(
      [&] {
        return Send("GET", "/api/v1/commands/" + sleeping).body["command"].value("state", "") ==
               "STATE_TERMINATED";
      },
      15s));
}

TEST_F(DeterminedCliTest, TheDefaultWorkspaceProjectAndNoTemplates) {
  const std::string workspaces = Determined("workspace list");
  EXPECT_TRUE(Has(workspaces, "Uncategorized")) << workspaces;
  const std::string projects = Determined("project list Uncategorized");
  EXPECT_TRUE(Has(projects, "Uncategorized")) << projects;
  EXPECT_TRUE(Has(projects, "rc=0")) << projects;
  const std::string none = Determined("project list Elsewhere");
  EXPECT_TRUE(Has(none, "No workspace found with name Elsewhere")) << none;
  const std::string templates = Determined("template list");
  EXPECT_TRUE(Has(templates, "rc=0")) << templates;
  EXPECT_TRUE(Has(templates, "Name")) << templates;
}

}  // namespace
}  // namespace det

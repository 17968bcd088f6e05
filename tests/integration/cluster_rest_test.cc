// The cluster's REST API with a plain HTTP client against real processes: the master, agents and
// slots, resource pools, the job queue, commands, tasks and their logs (also followed).
#include <gtest/gtest.h>

#include "tests/testing/cluster_fixture.h"
#include "tests/testing/rest_client.h"
#include "tests/testing/test_util.h"

namespace det {
namespace {

using testing::NdjsonResults;
using testing::RestAnswer;

class ClusterRestTest : public testing::ClusterProcessTest {
 protected:
  void SetUp() override {
    ClusterProcessTest::SetUp();
    rest_ = std::make_unique<testing::RestClient>(std::stoi(rest_port_));
    admin_ = rest_->Login("admin", testing::kAdminPassword);
    ASSERT_FALSE(admin_.empty());
  }
  RestAnswer Send(const std::string& method, const std::string& path,
                  const std::string& body = "") {
    return rest_->Send(method, path, admin_, body);
  }

  std::unique_ptr<testing::RestClient> rest_;
  std::string admin_;
};

TEST_F(ClusterRestTest, AgentsSlotsAndPools) {
  auto agent = StartAgent("rest-agent", 2);
  ASSERT_TRUE(
      testing::Eventually([&] { return Send("GET", "/api/v1/agents").body["agents"].size() == 1; },
                          std::chrono::seconds(10)));
  // Master info is public; the rest needs a token.
  RestAnswer info = rest_->Send("GET", "/api/v1/master", "");
  EXPECT_EQ(info.status, 200);
  EXPECT_FALSE(info.body.value("clusterId", "").empty()) << info.text;
  EXPECT_EQ(rest_->Send("GET", "/api/v1/agents", "").status, 401);

  RestAnswer one = Send("GET", "/api/v1/agents/rest-agent");
  EXPECT_EQ(one.body["agent"]["state"], "connected") << one.text;
  // Determined's v1Agent: slots by id, slotStats by device type.
  EXPECT_EQ(one.body["agent"]["slots"].size(), 2u) << one.text;
  EXPECT_EQ(one.body["agent"]["slotStats"]["typeStats"]["TYPE_CPU"]["total"], 2) << one.text;
  EXPECT_EQ(one.body["agent"]["resourcePools"][0], "default") << one.text;
  EXPECT_EQ(Send("GET", "/api/v1/agents/nope").status, 404);
  RestAnswer slots = Send("GET", "/api/v1/agents/rest-agent/slots");
  ASSERT_EQ(slots.body["slots"].size(), 2u) << slots.text;
  EXPECT_EQ(slots.body["slots"][0]["enabled"], true);

  // Admin work: 403 for a user, done for the admin.
  testing::Shell("printf 'bob-password\\n' | " +
                 DetCommand("DET_USER=admin DET_PASS=" + std::string(testing::kAdminPassword) +
                                " DET_AUTH_FILE=" + (dir_ / "auth-admin.json").string(),
                            "user create bob"));
  const std::string bob = rest_->Login("bob", "bob-password");
  ASSERT_FALSE(bob.empty());
  EXPECT_EQ(rest_->Send("POST", "/api/v1/agents/rest-agent/disable", bob).status, 403);
  // The master's own log: admins only, through REST and det.
  EXPECT_EQ(rest_->Send("GET", "/api/v1/master/logs", bob).status, 403);
  // Determined's MasterLogs stream: {"result": {"logEntry": ...}} lines; offset<0: the last ones.
  RestAnswer logs = Send("GET", "/api/v1/master/logs?limit=5");
  ASSERT_EQ(logs.status, 200) << logs.text;
  const std::vector<nlohmann::json> first = NdjsonResults(logs.text);
  ASSERT_EQ(first.size(), 5u) << logs.text;
  EXPECT_EQ(first[0]["logEntry"]["level"], "LOG_LEVEL_INFO") << logs.text;
  EXPECT_LT(first[0]["logEntry"]["id"].get<int64_t>(), first[4]["logEntry"]["id"].get<int64_t>());
  bool listening = false;
  for (const auto& line : NdjsonResults(Send("GET", "/api/v1/master/logs").text)) {
    listening |= line["logEntry"].value("message", "").find("det-master 0.1.0 listening") !=
                 std::string::npos;
  }
  EXPECT_TRUE(listening) << "the master's first lines are not in its log stream";
  const std::string last_text = Send("GET", "/api/v1/master/logs?offset=-2").text;
  const std::vector<nlohmann::json> last = NdjsonResults(last_text);
  ASSERT_EQ(last.size(), 2u) << last_text;
  EXPECT_GE(last[1]["logEntry"]["id"].get<int64_t>(), first[4]["logEntry"]["id"].get<int64_t>());
  EXPECT_EQ(last[1]["logEntry"]["id"].get<int64_t>(), last[0]["logEntry"]["id"].get<int64_t>() + 1);
  EXPECT_EQ(Send("GET", "/api/v1/master/logs?limit=-1").status, 400);
  EXPECT_EQ(Send("GET", "/api/v1/master/logs?follow=maybe").status, 400);
  EXPECT_NE(Det("master logs").find("det-master 0.1.0 listening"), std::string::npos);
  EXPECT_EQ(Send("POST", "/api/v1/agents/rest-agent/disable", R"({"drain":"yes"})").status, 400);
  RestAnswer disabled = Send("POST", "/api/v1/agents/rest-agent/disable", R"({"drain":true})");
  EXPECT_EQ(disabled.body["agent"]["enabled"], false) << disabled.text;
  EXPECT_EQ(Send("POST", "/api/v1/agents/rest-agent/enable").body["agent"]["enabled"], true);
  const std::string slot = slots.body["slots"][1]["id"];
  EXPECT_EQ(Send("POST", "/api/v1/agents/rest-agent/slots/" + slot + "/disable").status, 200);
  EXPECT_EQ(Send("GET", "/api/v1/agents/rest-agent/slots").body["slots"][1]["enabled"], false);
  EXPECT_EQ(Send("POST", "/api/v1/agents/nope/enable").status, 404);

  RestAnswer pools = Send("GET", "/api/v1/resource-pools");
  ASSERT_EQ(pools.body["resourcePools"].size(), 1u) << pools.text;
  EXPECT_EQ(pools.body["resourcePools"][0]["name"], "default");
  EXPECT_EQ(pools.body["resourcePools"][0]["schedulerType"], "SCHEDULER_TYPE_PRIORITY");
  EXPECT_EQ(pools.body["resourcePools"][0]["numAgents"], 1);
  EXPECT_EQ(pools.body["resourcePools"][0]["slotsAvailable"], 2);
  // det shows the same.
  EXPECT_NE(Det("resource-pool list").find("default*"), std::string::npos);
  EXPECT_NE(Det("slot list rest-agent").find("rest-agent"), std::string::npos);
}

TEST_F(ClusterRestTest, CommandsTasksLogsAndTheJobQueue) {
  EXPECT_NE(Send("POST", "/api/v1/commands", R"({"config":{"resources":{"slots":1}}})")
                .body.value("message", "")
                .find("config.entrypoint: is required"),
            std::string::npos);
  EXPECT_EQ(Send("POST", "/api/v1/commands",
                 R"({"config":{"entrypoint":"true","resources":{"slots":"one"}}})")
                .status,
            400);
  // Nothing can run yet: the command waits in the queue. Determined's LaunchCommand: its
  // command config in, a v1Command out.
  RestAnswer queued = Send("POST", "/api/v1/commands",
                           R"({"config":{"entrypoint":"for i in 1 2 3; do echo line $i; done",
          "description":"three lines","resources":{"priority":7}}})");
  ASSERT_EQ(queued.status, 200) << queued.text;
  const std::string task = queued.body["command"]["id"];
  EXPECT_EQ(queued.body["command"]["state"], "STATE_QUEUED") << queued.text;
  EXPECT_EQ(queued.body["command"]["username"], "admin") << queued.text;
  EXPECT_EQ(queued.body["command"]["description"], "three lines") << queued.text;
  const nlohmann::json listed = Send("GET", "/api/v1/commands?users=admin").body["commands"];
  ASSERT_EQ(listed.size(), 1u) << listed.dump();
  EXPECT_EQ(listed[0]["id"], task);
  EXPECT_TRUE(Send("GET", "/api/v1/commands?users=nobody").body["commands"].empty());
  RestAnswer jobs = Send("GET", "/api/v1/job-queues");
  ASSERT_EQ(jobs.body["jobs"].size(), 1u) << jobs.text;
  EXPECT_EQ(jobs.body["jobs"][0]["summary"]["state"], "STATE_QUEUED");
  EXPECT_EQ(jobs.body["jobs"][0]["priority"], 7);
  EXPECT_EQ(jobs.body["jobs"][0]["username"], "admin");
  const std::string job = jobs.body["jobs"][0]["jobId"];
  EXPECT_EQ(Send("GET", "/api/v1/job-queues-v2").body["jobs"][0]["full"]["jobId"], job);
  // Determined's UpdateJobQueue.
  auto update = [&](const std::string& control) {
    return Send("POST", "/api/v1/job-queues", R"({"updates":[)" + control + "]}");
  };
  EXPECT_EQ(update(R"({"jobId":")" + job + R"("})").status, 400);  // nothing to change
  RestAnswer ahead = update(R"({"jobId":")" + job + R"(","aheadOf":"other"})");
  EXPECT_EQ(ahead.status, 400);
  EXPECT_NE(ahead.body.value("message", "").find("updates[0]: aheadOf:"), std::string::npos)
      << ahead.text;
  EXPECT_EQ(update(R"({"jobId":"no-such-job","priority":3})").status, 404);
  EXPECT_EQ(update(R"({"jobId":")" + job + R"(","priority":3})").status, 200);
  EXPECT_EQ(Send("GET", "/api/v1/job-queues?resourcePool=default").body["jobs"][0]["priority"], 3);

  // Following the logs from before the start to the end.
  std::string followed;
  std::thread follower([&] {
    followed = rest_->Send("GET", "/api/v1/tasks/" + task + "/logs?follow=true", admin_).text;
  });
  auto agent = StartAgent("rest-agent", 1);
  follower.join();
  EXPECT_NE(followed.find("\"log\":\"line 1\""), std::string::npos) << followed;
  EXPECT_NE(followed.find("\"log\":\"line 3\""), std::string::npos) << followed;
  EXPECT_EQ(std::count(followed.begin(), followed.end(), '\n'), 3) << followed;

  RestAnswer got = Send("GET", "/api/v1/tasks/" + task);
  EXPECT_EQ(got.body["task"]["state"], "TERMINATED") << got.text;
  EXPECT_EQ(got.body["task"]["exitCode"], 0);
  // Determined's TaskLogs: NDJSON of {"result": line} whether followed or not.
  const std::vector<nlohmann::json> logs =
      NdjsonResults(Send("GET", "/api/v1/tasks/" + task + "/logs?limit=2").text);
  ASSERT_EQ(logs.size(), 2u);
  EXPECT_EQ(logs[0]["message"], "line 1\n");
  EXPECT_EQ(logs[0]["taskId"], task);
  const std::string second = logs[1]["id"];
  const std::vector<nlohmann::json> rest =
      NdjsonResults(Send("GET", "/api/v1/tasks/" + task + "/logs?afterId=" + second).text);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0]["log"], "line 3");
  const std::vector<nlohmann::json> newest = NdjsonResults(
      Send("GET", "/api/v1/tasks/" + task + "/logs?limit=2&orderBy=ORDER_BY_DESC").text);
  ASSERT_EQ(newest.size(), 2u);
  EXPECT_EQ(newest[0]["log"], "line 3");
  EXPECT_EQ(newest[1]["log"], "line 2");
  EXPECT_EQ(Send("GET", "/api/v1/tasks/" + task + "/logs?limit=x").status, 400);
  EXPECT_EQ(Send("GET", "/api/v1/tasks/no-such-task/logs").status, 404);
  EXPECT_EQ(Send("GET", "/api/v1/tasks/no-such-task/logs?follow=true").status, 404);
  EXPECT_EQ(Send("GET", "/api/v1/tasks/no-such-task").status, 404);
  EXPECT_EQ(Send("GET", "/api/v1/tasks").body["tasks"].size(), 1u);

  // Prometheus: for a user's token only; the cluster as it is now.
  EXPECT_EQ(rest_->Send("GET", "/metrics", "").status, 401);
  const std::string metrics = Send("GET", "/metrics").text;
  EXPECT_NE(metrics.find("det_agents{pool=\"default\",state=\"connected\"} 1\n"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("det_slots{pool=\"default\",state=\"free\"} 1\n"), std::string::npos);
  EXPECT_EQ(metrics.find("det_scheduling_passes_total 0\n"), std::string::npos);
  EXPECT_NE(metrics.find("det_bus_messages_total{endpoint=\"agents\"}"), std::string::npos);

  RestAnswer sleeper =
      Send("POST", "/api/v1/commands", R"({"config":{"entrypoint":["sleep","60"]}})");
  const std::string sleeping = sleeper.body["command"]["id"];
  ASSERT_TRUE(testing::Eventually(
      [&] { return Send("GET", "/api/v1/tasks/" + sleeping).body["task"]["state"] == "RUNNING"; },
      std::chrono::seconds(10)));
  // Determined's GetTasks: the running allocation, on the agent's slot.
  const nlohmann::json running = Send("GET", "/api/v1/tasks").body["allocationIdToSummary"];
  ASSERT_EQ(running.size(), 1u) << running.dump();
  EXPECT_EQ(running.begin().value()["taskId"], sleeping) << running.dump();
  EXPECT_EQ(running.begin().value()["resources"][0]["agentDevices"].begin().key(), "rest-agent");
  const nlohmann::json slot = Send("GET", "/api/v1/agents/rest-agent").body["agent"]["slots"];
  EXPECT_EQ(slot.begin().value()["container"]["id"], sleeping) << slot.dump();
  EXPECT_EQ(Send("POST", "/api/v1/commands/" + sleeping + "/kill").status, 200);
  EXPECT_TRUE(testing::Eventually(
      [&] {
        return Send("GET", "/api/v1/tasks/" + sleeping).body["task"]["failureType"] == "Killed";
      },
      std::chrono::seconds(15)));
}

}  // namespace
}  // namespace det

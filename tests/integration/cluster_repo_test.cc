// Cluster identity, resource pools, agents and their connections, cloud instances and scaling
// decisions, and the Database pool shared by readers.

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "storage/agents_repo.h"
#include "storage/cloud_repo.h"
#include "storage/database.h"
#include "tests/testing/postgres_fixture.h"

namespace det::storage {
namespace {

using det::testing::InTransaction;
using det::testing::PostgresEnvironment;

constexpr int64_t kT0 = 1'800'000'000'123'456'000;  // microsecond precision, as stored
constexpr int64_t kSecond = 1'000'000'000;

class ClusterRepoTest : public ::testing::Test {
 protected:
  DbConfig db_ = PostgresEnvironment::Get()->MigratedDatabase();
};

TEST_F(ClusterRepoTest, ClusterIdIsFixedByTheFirstStart) {
  EXPECT_EQ(InTransaction(db_, [](pqxx::work& tx) { return EnsureClusterId(tx, "first"); }),
            "first");
  EXPECT_EQ(InTransaction(db_, [](pqxx::work& tx) { return EnsureClusterId(tx, "second"); }),
            "first");
}

TEST_F(ClusterRepoTest, ResourcePoolsAreUpsertedByName) {
  InTransaction(db_, [](pqxx::work& tx) {
    UpsertResourcePool(tx, {"gpu", "old", R"({"max_instances": 2})"});
    UpsertResourcePool(tx, {"cpu", "", "{}"});
    UpsertResourcePool(tx, {"gpu", "new", R"({"max_instances": 8})"});
    auto pools = ListResourcePools(tx);
    ASSERT_EQ(pools.size(), 2u);
    EXPECT_EQ(pools[1].name, "gpu");
    EXPECT_EQ(pools[1].description, "new");
    EXPECT_EQ(pools[1].config_json, R"({"max_instances": 8})");
  });
}

TEST_F(ClusterRepoTest, AgentUpsertKeepsFirstSeenAndUpdatesTheRest) {
  InTransaction(db_, [](pqxx::work& tx) {
    AgentRecord agent{"a1", "default", "host1", "0.1", R"([{"type": "cuda"}])", "ACTIVE", 0, 0};
    UpsertAgent(tx, agent, kT0);
    agent.hostname = "host1b";
    agent.state = "RECONNECTING";
    UpsertAgent(tx, agent, kT0 + kSecond);
    auto found = FindAgent(tx, "a1");
    ASSERT_TRUE(found.ok());
    EXPECT_EQ(found->hostname, "host1b");
    EXPECT_EQ(found->slots_json, R"([{"type": "cuda"}])");
    EXPECT_EQ(found->first_seen_ns, kT0);
    EXPECT_EQ(found->last_seen_ns, kT0 + kSecond);

    ASSERT_TRUE(SetAgentState(tx, "a1", "LOST", kT0 + 2 * kSecond).ok());
    EXPECT_EQ(FindAgent(tx, "a1")->state, "LOST");
    EXPECT_EQ(SetAgentState(tx, "zz", "LOST", kT0).code(), StatusCode::kNotFound);
    EXPECT_EQ(FindAgent(tx, "zz").status().code(), StatusCode::kNotFound);
    EXPECT_EQ(ListAgents(tx).size(), 1u);
  });
}

TEST_F(ClusterRepoTest, ConnectionHistoryIsNewestFirstAndARestartClosesOpenOnes) {
  InTransaction(db_, [](pqxx::work& tx) {
    const int64_t first = OpenAgentConnection(tx, "a1", kT0);
    ASSERT_TRUE(CloseAgentConnection(tx, first, kT0 + kSecond, "heartbeat timeout").ok());
    EXPECT_EQ(CloseAgentConnection(tx, first, kT0 + kSecond, "again").code(),
              StatusCode::kNotFound);
    OpenAgentConnection(tx, "a1", kT0 + 2 * kSecond);
    OpenAgentConnection(tx, "a2", kT0 + 2 * kSecond);
    OpenAgentConnection(tx, "a3", kT0 + 2 * kSecond);
    EXPECT_EQ(CloseAgentConnectionsOf(tx, "a3", kT0 + 2 * kSecond, "lost"), 1);
    EXPECT_EQ(CloseOpenAgentConnections(tx, kT0 + 3 * kSecond, "master restarted"), 2);

    auto history = AgentConnectionHistory(tx, "a1", 10);
    ASSERT_EQ(history.size(), 2u);
    EXPECT_EQ(history[0].connected_at_ns, kT0 + 2 * kSecond);
    EXPECT_EQ(history[0].reason, "master restarted");
    EXPECT_EQ(history[1].disconnected_at_ns, kT0 + kSecond);
    EXPECT_EQ(history[1].reason, "heartbeat timeout");
    EXPECT_EQ(AgentConnectionHistory(tx, "a1", 1).size(), 1u);
  });
}

TEST_F(ClusterRepoTest, InstancesMoveThroughStatesAndTerminatedOnesLeaveTheLiveList) {
  InTransaction(db_, [](pqxx::work& tx) {
    UpsertInstance(
        tx, {"i-1", "aws", "gpu", "p3.2xlarge", true, "pending", std::nullopt, kT0, std::nullopt});
    UpsertInstance(tx, {"i-2", "aws", "gpu", "p3.2xlarge", false, "pending", std::nullopt,
                        kT0 + kSecond, std::nullopt});
    UpsertInstance(
        tx, {"i-1", "aws", "gpu", "p3.2xlarge", true, "running", std::nullopt, 0, std::nullopt});
    ASSERT_TRUE(SetInstanceAgent(tx, "i-1", "agent-i-1").ok());
    ASSERT_TRUE(SetInstanceState(tx, "i-2", "terminated", kT0 + 5 * kSecond).ok());
    EXPECT_EQ(SetInstanceState(tx, "i-9", "running", std::nullopt).code(), StatusCode::kNotFound);

    auto one = GetInstance(tx, "i-1");
    ASSERT_TRUE(one.ok());
    EXPECT_EQ(one->state, "running");
    EXPECT_TRUE(one->spot);
    EXPECT_EQ(one->agent_id, "agent-i-1");
    EXPECT_EQ(one->launched_ns, kT0);  // the second upsert does not move the launch time

    auto live = ListInstances(tx, "gpu", /*live_only=*/true);
    ASSERT_EQ(live.size(), 1u);
    EXPECT_EQ(live[0].id, "i-1");
    auto all = ListInstances(tx, "gpu", /*live_only=*/false);
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all[1].terminated_ns, kT0 + 5 * kSecond);
    EXPECT_TRUE(ListInstances(tx, "cpu", false).empty());
  });
}

TEST_F(ClusterRepoTest, ScalingDecisionsAreListedNewestFirstPerPool) {
  InTransaction(db_, [](pqxx::work& tx) {
    RecordScalingDecision(tx, {0, "gpu", kT0, 2, "[]", R"(["3 slots pending"])"});
    RecordScalingDecision(tx, {0, "gpu", kT0 + kSecond, 0, R"(["i-1"])", R"(["idle 5m"])"});
    RecordScalingDecision(tx, {0, "cpu", kT0, 1, "[]", "[]"});
    auto decisions = ListScalingDecisions(tx, "gpu", 10);
    ASSERT_EQ(decisions.size(), 2u);
    EXPECT_EQ(decisions[0].terminate_json, R"(["i-1"])");
    EXPECT_EQ(decisions[0].decided_ns, kT0 + kSecond);
    EXPECT_EQ(decisions[1].launch, 2);
    EXPECT_EQ(decisions[1].reasons_json, R"(["3 slots pending"])");
  });
}

TEST_F(ClusterRepoTest, ConcurrentReadersShareTheDatabasePool) {
  InTransaction(db_, [](pqxx::work& tx) {
    UpsertAgent(tx, {"a1", "default", "h", "v", "[]", "ACTIVE", 0, 0}, kT0);
  });
  Database database(db_, /*pool_size=*/3);
  std::atomic<int> found{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 6; ++r) {
    readers.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        Status status = database.Run([&](pqxx::work& tx) {
          if (FindAgent(tx, "a1").ok()) ++found;
          return Status::Ok();
        });
        EXPECT_TRUE(status.ok()) << status.ToString();
      }
    });
  }
  for (auto& reader : readers) reader.join();
  EXPECT_EQ(found.load(), 300);
}

}  // namespace
}  // namespace det::storage

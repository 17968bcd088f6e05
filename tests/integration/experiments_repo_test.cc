// Experiments, trials, checkpoints, tasks and allocations, and reads of metrics and logs.

#include "storage/experiments_repo.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "storage/ingest_writer.h"
#include "storage/logs_repo.h"
#include "storage/metrics_repo.h"
#include "storage/tasks_repo.h"
#include "storage/users_repo.h"
#include "tests/testing/postgres_fixture.h"

namespace det::storage {
namespace {

using det::testing::InTransaction;
using det::testing::PostgresEnvironment;

constexpr int64_t kExperimentsT0 = 1'800'000'000'000'001'000;
constexpr int64_t kExperimentsSecond = 1'000'000'000;
constexpr const char* kUuidA = "0b3f4b2e-6c1d-4e0a-9a51-5a0f2a1d7c01";
constexpr const char* kUuidB = "0b3f4b2e-6c1d-4e0a-9a51-5a0f2a1d7c02";

class ExperimentsRepoTest : public ::testing::Test {
 protected:
  DbConfig db_ = PostgresEnvironment::Get()->MigratedDatabase();

  int64_t NewExperiment(const std::string& name) {
    return InTransaction(db_, [&](pqxx::work& tx) {
      return CreateExperiment(
          tx, {name, "searcher: {name: single}\n", "ACTIVE", std::nullopt, std::nullopt});
    });
  }
  int64_t NewTrial(int64_t experiment, const std::string& request) {
    return InTransaction(db_, [&](pqxx::work& tx) {
      return CreateTrial(tx, experiment, request, R"({"lr": 0.1})", "ACTIVE");
    });
  }
};

TEST_F(ExperimentsRepoTest, ExperimentKeepsConfigOwnerAndModelBytes) {
  const std::string model(
      "\x1f\x8b\x00\x00"
      "binary\xff",
      11);  // NUL and high bytes survive
  InTransaction(db_, [&](pqxx::work& tx) {
    const int64_t owner = *CreateUser(tx, "alice", "h", false);
    const int64_t id = CreateExperiment(tx, {"mnist", "name: mnist\n", "ACTIVE", owner, model});
    auto experiment = GetExperiment(tx, id);
    ASSERT_TRUE(experiment.ok()) << experiment.status().ToString();
    EXPECT_EQ(experiment->name, "mnist");
    EXPECT_EQ(experiment->config, "name: mnist\n");
    EXPECT_EQ(experiment->owner_id, owner);
    EXPECT_FALSE(experiment->end_ns.has_value());
    EXPECT_EQ(*GetModelDefinition(tx, id), model);
    EXPECT_EQ(GetExperiment(tx, id + 100).status().code(), StatusCode::kNotFound);
  });
}

// The experiment service reserves a trial's id when the search asks for it and writes the row in
// the transaction that stores the search: ids never collide with CreateTrial's, a request id is
// taken once.
TEST_F(ExperimentsRepoTest, AReservedTrialIdIsWrittenLaterAndARequestIsTakenOnce) {
  const int64_t experiment = NewExperiment("reserved");
  InTransaction(db_, [&](pqxx::work& tx) {
    const int64_t reserved = NextTrialId(tx);
    const int64_t created = CreateTrial(tx, experiment, "1", "{}", "ACTIVE");
    EXPECT_NE(created, reserved);
    ASSERT_TRUE(InsertTrial(tx, reserved, experiment, "2", R"({"lr": 0.5})", "PAUSED").ok());
    auto trial = GetTrial(tx, reserved);
    ASSERT_TRUE(trial.ok()) << trial.status().ToString();
    EXPECT_EQ(trial->request_id, "2");
    EXPECT_EQ(trial->state, "PAUSED");
    EXPECT_EQ(nlohmann::json::parse(trial->hparams_json)["lr"], 0.5);
    const Status again = InsertTrial(tx, NextTrialId(tx), experiment, "2", "{}", "ACTIVE");
    EXPECT_EQ(again.code(), StatusCode::kAlreadyExists) << again.ToString();
    EXPECT_EQ(ListTrials(tx, experiment).size(), 2u);
  });
}

TEST_F(ExperimentsRepoTest, StateSearcherStateAndArchiveAreStored) {
  const int64_t done = NewExperiment("done");
  const int64_t running = NewExperiment("running");
  const std::string searcher_state("\x00\x01state", 7);
  InTransaction(db_, [&](pqxx::work& tx) {
    ASSERT_TRUE(SaveSearcherState(tx, running, searcher_state).ok());
    ASSERT_TRUE(SetExperimentState(tx, done, "COMPLETED", kExperimentsT0).ok());
    ASSERT_TRUE(SetExperimentArchived(tx, done, true).ok());
    EXPECT_EQ(SetExperimentState(tx, 999, "X", std::nullopt).code(), StatusCode::kNotFound);

    EXPECT_EQ(GetExperiment(tx, running)->searcher_state, searcher_state);
    EXPECT_EQ(GetExperiment(tx, done)->end_ns, kExperimentsT0);
    auto unfinished = ListExperiments(tx, {.only_unfinished = true});
    ASSERT_EQ(unfinished.size(), 1u);
    EXPECT_EQ(unfinished[0].id, running);
    EXPECT_EQ(ListExperiments(tx, {.include_archived = false}).size(), 1u);
    EXPECT_EQ(ListExperiments(tx, {}).size(), 2u);
  });
}

TEST_F(ExperimentsRepoTest, TrialCreationIsIdempotentPerRequestId) {
  const int64_t experiment = NewExperiment("e");
  const int64_t first = NewTrial(experiment, "r1");
  EXPECT_EQ(NewTrial(experiment, "r1"), first);
  const int64_t second = NewTrial(experiment, "r2");
  EXPECT_NE(second, first);
  InTransaction(db_, [&](pqxx::work& tx) {
    auto trials = ListTrials(tx, experiment);
    ASSERT_EQ(trials.size(), 2u);
    EXPECT_EQ(trials[0].hparams_json, R"({"lr": 0.1})");
    EXPECT_EQ(trials[0].request_id, "r1");
  });
}

TEST_F(ExperimentsRepoTest, TrialRestartsRunsAndEndAreCounted) {
  const int64_t trial = NewTrial(NewExperiment("e"), "r1");
  InTransaction(db_, [&](pqxx::work& tx) {
    EXPECT_EQ(*StartTrialRun(tx, trial), 1);
    EXPECT_EQ(*RecordTrialRestart(tx, trial), 1);
    EXPECT_EQ(*StartTrialRun(tx, trial), 2);
    ASSERT_TRUE(SetTrialState(tx, trial, "COMPLETED", kExperimentsT0).ok());
    auto record = GetTrial(tx, trial);
    EXPECT_EQ(record->restarts, 1);
    EXPECT_EQ(record->run_id, 2);
    EXPECT_EQ(record->state, "COMPLETED");
    EXPECT_EQ(record->end_ns, kExperimentsT0);
    EXPECT_EQ(RecordTrialRestart(tx, trial + 1).status().code(), StatusCode::kNotFound);
  });
}

TEST_F(ExperimentsRepoTest, CheckpointsAreUpsertedAndTheLatestCompletedOneIsFound) {
  const int64_t trial = NewTrial(NewExperiment("e"), "r1");
  InTransaction(db_, [&](pqxx::work& tx) {
    EXPECT_FALSE(LatestCheckpoint(tx, trial).has_value());
    ASSERT_TRUE(SaveCheckpoint(tx, {kUuidA, trial, 100, "COMPLETED", R"({"w.pt": 10})"}).ok());
    ASSERT_TRUE(SaveCheckpoint(tx, {kUuidB, trial, 200, "ACTIVE"}).ok());
    EXPECT_EQ(LatestCheckpoint(tx, trial)->uuid, kUuidA);  // B is not complete yet
    ASSERT_TRUE(SaveCheckpoint(tx, {kUuidB, trial, 200, "COMPLETED", R"({"w.pt": 12})"}).ok());
    EXPECT_EQ(LatestCheckpoint(tx, trial)->uuid, kUuidB);
    ASSERT_TRUE(SetCheckpointState(tx, kUuidB, "DELETED").ok());
    EXPECT_EQ(LatestCheckpoint(tx, trial)->steps_completed, 100);

    auto all = ListCheckpoints(tx, trial);
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all[1].resources_json, R"({"w.pt": 12})");
    Status bad = SaveCheckpoint(tx, {"not-a-uuid'; --", trial, 1, "ACTIVE"});
    EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(bad.message().find("not-a-uuid"), std::string::npos);
  });
}

TEST_F(ExperimentsRepoTest, AnotherTrialsCheckpointUuidIsRefusedAndLeftAsItWas) {
  const int64_t experiment = NewExperiment("e");
  const int64_t owner = NewTrial(experiment, "r1"), other = NewTrial(experiment, "r2");
  InTransaction(db_, [&](pqxx::work& tx) {
    ASSERT_TRUE(SaveCheckpoint(tx, {kUuidA, owner, 100, "COMPLETED", R"({"w.pt": 10})"}).ok());
    Status stolen = SaveCheckpoint(tx, {kUuidA, other, 100, "DELETED", R"({"x": 1})"});
    EXPECT_EQ(stolen.code(), StatusCode::kAlreadyExists) << stolen.ToString();
    auto kept = ListCheckpoints(tx, owner);
    ASSERT_EQ(kept.size(), 1u);
    EXPECT_EQ(kept[0].state, "COMPLETED");
    EXPECT_EQ(kept[0].resources_json, R"({"w.pt": 10})");
    EXPECT_TRUE(ListCheckpoints(tx, other).empty());
  });
}

TEST_F(ExperimentsRepoTest, AllocationsAreOpenUntilFinished) {
  const int64_t trial = NewTrial(NewExperiment("e"), "r1");
  InTransaction(db_, [&](pqxx::work& tx) {
    CreateTask(tx, {"task-1", "TRIAL", trial, "{}", kExperimentsT0});
    CreateTask(tx, {"task-1", "COMMAND", std::nullopt, "{}",
                    kExperimentsT0 + kExperimentsSecond});  // no-op
    EXPECT_EQ(GetTask(tx, "task-1")->type, "TRIAL");
    EXPECT_EQ(GetTask(tx, "task-1")->trial_id, trial);

    CreateAllocation(tx, {"task-1.1", "task-1", "default", 2, "[]", "PENDING"});
    CreateAllocation(tx, {"task-1.2", "task-1", "default", 2, "[]", "PENDING"});
    ASSERT_TRUE(
        SetAllocationPlaced(tx, "task-1.1", R"([{"agent": "a1"}])", "RUNNING", kExperimentsT0)
            .ok());
    ASSERT_TRUE(SetAllocationState(tx, "task-1.2", "ASSIGNED").ok());
    ASSERT_TRUE(FinishAllocation(tx, "task-1.1", "TERMINATED", kExperimentsT0 + kExperimentsSecond,
                                 137, "agent lost")
                    .ok());
    EXPECT_EQ(SetAllocationState(tx, "nope", "X").code(), StatusCode::kNotFound);

    auto open = ListOpenAllocations(tx);
    ASSERT_EQ(open.size(), 1u);
    EXPECT_EQ(open[0].id, "task-1.2");
    EXPECT_EQ(open[0].state, "ASSIGNED");
    auto done = GetAllocation(tx, "task-1.1");
    EXPECT_EQ(done->agents_json, R"([{"agent": "a1"}])");
    EXPECT_EQ(done->start_ns, kExperimentsT0);
    EXPECT_EQ(done->exit_code, 137);
    EXPECT_EQ(done->failure, "agent lost");
    EXPECT_EQ(ListTaskAllocations(tx, "task-1").size(), 2u);
    ASSERT_TRUE(EndTask(tx, "task-1", kExperimentsT0 + 2 * kExperimentsSecond).ok());
    EXPECT_EQ(GetTask(tx, "task-1")->end_ns, kExperimentsT0 + 2 * kExperimentsSecond);
  });
}

TEST_F(ExperimentsRepoTest, MetricsAndLogsWrittenByTheWriterAreReadInPages) {
  IngestWriter writer(db_);
  std::vector<MetricPoint> points;
  for (int step = 1; step <= 5; ++step) {
    points.push_back({7, "training", step, 0, R"({"loss": )" + std::to_string(step) + "}"});
  }
  points.push_back({7, "validation", 5, 0, R"({"acc": 0.9})"});
  ASSERT_TRUE(writer.WriteMetrics("m1", points).ok());
  std::vector<LogLine> lines;
  for (int i = 0; i < 5; ++i)
    lines.push_back(
        {"task-1", "a1", kExperimentsT0 + i, "INFO", "stdout", "l" + std::to_string(i)});
  ASSERT_TRUE(writer.WriteLogs("l1", lines).ok());

  InTransaction(db_, [&](pqxx::work& tx) {
    auto page = ReadMetrics(tx, 7, "training", 0, 3);
    ASSERT_EQ(page.size(), 3u);
    EXPECT_EQ(page[2].step, 3);
    auto rest = ReadMetrics(tx, 7, "training", page.back().step, 10);
    ASSERT_EQ(rest.size(), 2u);
    EXPECT_EQ(rest[1].metrics_json, R"({"loss": 5})");
    EXPECT_EQ(ReadMetrics(tx, 7, "validation", 0, 10).size(), 1u);

    auto first = *ReadTaskLogs(tx, "task-1", LogQuery{}, 2);
    ASSERT_EQ(first.size(), 2u);
    EXPECT_EQ(first[0].line.log, "l0");
    EXPECT_EQ(first[0].line.timestamp_ns, kExperimentsT0);  // nanoseconds kept
    auto next = *ReadTaskLogs(tx, "task-1", LogQuery{first.back().id}, 10);
    ASSERT_EQ(next.size(), 3u);
    EXPECT_EQ(next[2].line.log, "l4");
    EXPECT_TRUE(ReadTaskLogs(tx, "task-2", LogQuery{}, 10)->empty());

    // The last lines, and a time range: [T0 + 1, T0 + 4) holds l1..l3.
    auto tail = *TaskLogTailStart(tx, "task-1", LogQuery{}, 2);
    EXPECT_EQ(tail.lines, 2);
    auto last_two = *ReadTaskLogs(tx, "task-1", LogQuery{tail.after_id}, 10);
    ASSERT_EQ(last_two.size(), 2u);
    EXPECT_EQ(last_two[0].line.log, "l3");
    EXPECT_EQ(TaskLogTailStart(tx, "task-1", LogQuery{}, 99)->lines, 5);
    LogQuery range{0, kExperimentsT0 + 1, kExperimentsT0 + 4};
    auto ranged = *ReadTaskLogs(tx, "task-1", range, 10);
    ASSERT_EQ(ranged.size(), 3u);
    EXPECT_EQ(ranged[0].line.log, "l1");
    EXPECT_EQ(ranged[2].line.log, "l3");
    auto ranged_tail = *TaskLogTailStart(tx, "task-1", range, 1);
    range.after_id = ranged_tail.after_id;
    EXPECT_EQ(ReadTaskLogs(tx, "task-1", range, 10)->at(0).line.log, "l3");
  });
}

TEST_F(ExperimentsRepoTest, LogRetentionRemovesTheLogsOfTasksEndedLongEnoughAgoAndNothingElse) {
  constexpr int64_t kDay = 86400 * kExperimentsSecond;
  const int64_t now = kExperimentsT0 + 400 * kDay;
  const int64_t keep_forever = InTransaction(db_, [&](pqxx::work& tx) {
    return CreateExperiment(tx, {"kept", "x", "ACTIVE", std::nullopt, std::nullopt, -1});
  });
  const int64_t one_day = InTransaction(db_, [&](pqxx::work& tx) {
    return CreateExperiment(tx, {"short", "x", "ACTIVE", std::nullopt, std::nullopt, 1});
  });
  const int64_t trial_kept = NewTrial(keep_forever, "r1");
  const int64_t trial_short = NewTrial(one_day, "r1");
  IngestWriter writer(db_);
  // name, trial, ended how many days before `now` (nullopt: still running)
  const std::vector<std::tuple<std::string, std::optional<int64_t>, std::optional<int>>> tasks = {
      {"cmd-old", std::nullopt, 40},
      {"cmd-recent", std::nullopt, 20},
      {"cmd-running", std::nullopt, std::nullopt},
      {"trial-kept", trial_kept, 300},
      {"trial-short", trial_short, 2}};
  for (const auto& task : tasks) {
    const auto& [id, trial, ended_days_ago] = task;
    InTransaction(db_, [&, &id = id, &trial = trial,
                        &ended_days_ago = ended_days_ago](pqxx::work& tx) {
      CreateTask(tx, {id, trial ? "TRIAL" : "COMMAND", trial, "{}", kExperimentsT0, std::nullopt});
      if (ended_days_ago) (void)EndTask(tx, id, now - *ended_days_ago * kDay);
      return 0;
    });
    std::vector<LogLine> lines;
    for (int i = 0; i < 3; ++i)
      lines.push_back({id, "a1", kExperimentsT0 + i, "INFO", "stdout", "x"});
    ASSERT_TRUE(writer.WriteLogs("retention-" + id, lines).ok());
  }
  auto count = [&](const std::string& task) {
    return InTransaction(db_, [&](pqxx::work& tx) {
      return static_cast<int>(ReadTaskLogs(tx, task, LogQuery{}, 100)->size());
    });
  };
  // The cluster keeps logs 30 days: the old command goes, and the one-day experiment's trial.
  EXPECT_EQ(InTransaction(db_, [&](pqxx::work& tx) { return DeleteExpiredLogs(tx, 30, now); }), 6);
  EXPECT_EQ(count("cmd-old"), 0);
  EXPECT_EQ(count("trial-short"), 0);
  EXPECT_EQ(count("cmd-recent"), 3);
  EXPECT_EQ(count("cmd-running"), 3);
  EXPECT_EQ(count("trial-kept"), 3);
  // -1 keeps everything; 0 removes every ended task's logs but the experiment that keeps them.
  EXPECT_EQ(InTransaction(db_, [&](pqxx::work& tx) { return DeleteExpiredLogs(tx, -1, now); }), 0);
  EXPECT_EQ(InTransaction(db_, [&](pqxx::work& tx) { return DeleteExpiredLogs(tx, 0, now); }), 3);
  EXPECT_EQ(count("cmd-recent"), 0);
  EXPECT_EQ(count("cmd-running"), 3);
  EXPECT_EQ(count("trial-kept"), 3);
}

}  // namespace
}  // namespace det::storage

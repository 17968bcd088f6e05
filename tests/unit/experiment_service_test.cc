// The experiment service as an actor on its own thread, with its records in memory
// (tests/testing/in_memory_experiment_records.h), beside a real agent registry (its records in
// memory too), the event bus it learns runs' ends from, and one agent on the bus: a trial's row
// stored with its search before its run is submitted, a trial and its experiment completed by a
// validation at max_length and a clean exit, nothing acted on while the records are out of reach,
// a run that ended while no service ran accounted for by the next one, pause and activate.
#include "master/experiments/experiment_service.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "bus/event_broker.h"
#include "bus/rpc_client.h"
#include "master/cluster/agent_registry.h"
#include "tests/testing/fake_agent.h"
#include "tests/testing/in_memory_cluster_records.h"
#include "tests/testing/in_memory_experiment_records.h"
#include "tests/testing/test_util.h"

namespace det::master {
namespace {

using namespace std::chrono_literals;
using testing::FakeAgent;

constexpr const char* kSingleTrial =
    "name: service-test\n"
    "entrypoint: python3 train.py\n"
    "hyperparameters: {lr: 0.1}\n"
    "searcher: {name: single, metric: loss, max_length: {batches: 100}}\n"
    "checkpoint_storage: {type: shared_fs, host_path: /tmp/checkpoints}\n"
    "max_restarts: 1\n";

class ExperimentServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    broker_ = std::make_unique<bus::EventBroker>(context_, clock_);
    auto events = broker_->BindLocal({testing::InprocEndpoint("events-publish"),
                                      testing::InprocEndpoint("events-subscribe"),
                                      testing::InprocEndpoint("events-snapshot")});
    ASSERT_TRUE(events.ok()) << events.status().ToString();
    events_ = *events;
    broker_->Start();
    registry_ = std::make_unique<AgentRegistry>(context_, clock_, FakeAgent::Timing(), 1 << 20,
                                                cluster_records_, "http://master:8080",
                                                ResourcesConfig{}, AllocationTokens("secret"));
    auto bound = registry_->Bind(testing::InprocEndpoint("agents"), {}, events_.publish);
    ASSERT_TRUE(bound.ok()) << bound.status().ToString();
    registry_->Start();
    agent_ = std::make_unique<FakeAgent>(context_, "agent-1", *bound, clock_);
    ASSERT_TRUE(agent_->Start().ok());
    ASSERT_TRUE(Until([&] { return cluster_records_.Read().agent_states.count("agent-1") > 0; }));
    StartService();
  }
  void TearDown() override {
    service_.reset();
    registry_->Stop();
    broker_->Stop();
  }

  // A service (again, after StopService: a master started anew) resumes what the records hold.
  void StartService() {
    service_ = std::make_unique<ExperimentService>(
        context_, clock_, records_, TrialLaunchOptions{.master_url = "http://master:8080"},
        events_);
    ASSERT_TRUE(service_->Bind().ok());
    ASSERT_TRUE(service_->Restore().ok());
    service_->Start();
  }
  void StopService() { service_.reset(); }

  // Pumps the agent until `done` (real time, bounded: the actors' threads do the work).
  bool Until(const std::function<bool()>& done) {
    return testing::PumpUntil([&] { agent_->Pump(); }, done, 5000ms);
  }
  template <class Request, class Reply>
  Result<Reply> Call(const Request& request) {
    bus::RpcClient client(context_, ExperimentService::kEndpoint, {},
                          {.timeout = 10s, .attempts = 1});
    return client.template Call<Request, Reply>(request);
  }
  int64_t Create(const std::string& config = kSingleTrial) {
    auto created = Call<bus::ExperimentCreateRequest, bus::ExperimentCreateReply>(
        {.config_yaml = config, .owner_id = 1, .owner = "alice"});
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? created->id : 0;
  }
  Status Act(int64_t id, const std::string& action) {
    return Call<bus::ExperimentActionRequest, bus::ExperimentActionReply>({id, action}).status();
  }
  Status Report(const bus::TrialReport& report) {
    return Call<bus::TrialReport, bus::TrialSignal>(report).status();
  }
  // The run the agent was sent `n`th (0: the first).
  const bus::WorkloadStart& NthStart(size_t n) {
    EXPECT_TRUE(Until([&] { return agent_->starts.size() > n; })) << "no start #" << n;
    return agent_->starts.size() > n ? agent_->starts[n] : none_;
  }
  void Ends(const bus::WorkloadStart& start, int exit_code) {
    agent_->Report(start, bus::kWorkloadRunning);
    agent_->Report(start, bus::kWorkloadTerminated, exit_code);
  }
  storage::TrialRecord StoredTrial(int64_t id) {
    auto trials = records_.Read().trials;
    return trials.count(id) ? trials.at(id) : storage::TrialRecord{};
  }
  std::string StoredExperimentState(int64_t id) {
    auto experiments = records_.Read().experiments;
    return experiments.count(id) ? experiments.at(id).state : "";
  }

  zmq::context_t context_;
  SimulatedClock clock_;
  testing::InMemoryClusterRecords cluster_records_;
  testing::InMemoryExperimentRecords records_;
  bus::EventBrokerEndpoints events_;
  std::unique_ptr<bus::EventBroker> broker_;
  std::unique_ptr<AgentRegistry> registry_;
  std::unique_ptr<FakeAgent> agent_;
  std::unique_ptr<ExperimentService> service_;
  const bus::WorkloadStart none_{};
};

TEST_F(ExperimentServiceTest, ATrialIsStoredWithTheSearchThatAskedForItAndThenSubmitted) {
  const int64_t id = Create();
  ASSERT_GT(id, 0);
  const auto stored = records_.Read();
  ASSERT_FALSE(stored.stores.empty());
  const ExperimentChanges& first = stored.stores.front();
  ASSERT_EQ(first.created.size(), 1u) << "the trial's row";
  ASSERT_EQ(first.experiments.size(), 1u) << "with the search that asked for it";
  EXPECT_EQ(first.experiments[0].id, id);
  EXPECT_NE(first.experiments[0].searcher_state.find(std::to_string(first.created[0].id)),
            std::string::npos)
      << "the saved search knows the trial: " << first.experiments[0].searcher_state;
  const bus::WorkloadStart& start = NthStart(0);
  EXPECT_EQ(start.task_id, "trial-" + std::to_string(first.created[0].id) + "-1");
  EXPECT_EQ(start.env.at("DET_EXPERIMENT_ID"), std::to_string(id));
  EXPECT_EQ(StoredTrial(first.created[0].id).run_id, 1);
}

TEST_F(ExperimentServiceTest, AValidationAtMaxLengthAndACleanExitCompleteTheTrialAndExperiment) {
  const int64_t id = Create();
  const bus::WorkloadStart start = NthStart(0);
  ASSERT_TRUE(Report({start.allocation_id, "validation", 100, R"({"loss": 0.25})"}).ok());
  Ends(start, 0);
  ASSERT_TRUE(Until([&] { return StoredExperimentState(id) == "COMPLETED"; }))
      << StoredExperimentState(id);
  const auto experiment = records_.Read().experiments.at(id);
  EXPECT_TRUE(experiment.end_ns.has_value()) << "a finished experiment has its end";
  const storage::TrialRecord trial = StoredTrial(1);
  EXPECT_EQ(trial.state, "COMPLETED");
  EXPECT_TRUE(trial.end_ns.has_value());
  EXPECT_EQ(trial.restarts, 0);
  EXPECT_EQ(agent_->starts.size(), 1u) << "nothing started again";
}

TEST_F(ExperimentServiceTest, ARunsEndIsActedOnOnlyOnceTheRecordsTakeWhatItChanged) {
  Create();
  const bus::WorkloadStart first = NthStart(0);
  records_.SetReachable(false);
  Ends(first, 137);  // crashed: a restart, counted
  EXPECT_FALSE(testing::PumpUntil([&] { agent_->Pump(); },
                                  [&] { return agent_->starts.size() > 1; }, 1000ms))
      << "no run starts that the records do not know";
  EXPECT_EQ(StoredTrial(1).restarts, 0);
  records_.SetReachable(true);
  const bus::WorkloadStart& second = NthStart(1);
  EXPECT_EQ(second.task_id, "trial-1-2");
  const storage::TrialRecord trial = StoredTrial(1);
  EXPECT_EQ(trial.restarts, 1);
  EXPECT_EQ(trial.run_id, 2);
  EXPECT_EQ(trial.state, "ACTIVE");
}

TEST_F(ExperimentServiceTest, ARunThatEndedWhileNoServiceRanIsAccountedForByTheNext) {
  const int64_t id = Create();
  const bus::WorkloadStart first = NthStart(0);
  StopService();
  Ends(first, 137);
  ASSERT_TRUE(Until([&] {
    const auto states = cluster_records_.Read().task_states[first.allocation_id];
    return !states.empty() && states.back() == "TERMINATED";
  }));
  StartService();  // a master started again: the registry says how the run ended
  const bus::WorkloadStart& second = NthStart(1);
  EXPECT_EQ(second.task_id, "trial-1-2");
  EXPECT_EQ(StoredTrial(1).restarts, 1) << "the crash counts against max_restarts";
  Ends(second, 137);
  ASSERT_TRUE(Until([&] { return StoredExperimentState(id) == "ERROR"; }))
      << "past max_restarts: " << StoredExperimentState(id);
  EXPECT_EQ(StoredTrial(1).state, "ERROR");
  EXPECT_EQ(agent_->starts.size(), 2u);
}

TEST_F(ExperimentServiceTest, PauseKillsTheRunAndActivateStartsTheTrialAgainWithoutARestart) {
  const int64_t id = Create();
  const bus::WorkloadStart first = NthStart(0);
  agent_->Report(first, bus::kWorkloadRunning);
  ASSERT_TRUE(Act(id, "pause").ok());
  ASSERT_TRUE(Until([&] { return !agent_->kills.empty(); }))
      << "a run not listening for the signal is killed at once";
  EXPECT_EQ(agent_->kills[0], first.allocation_id);
  agent_->Report(first, bus::kWorkloadTerminated, 143);
  ASSERT_TRUE(Until([&] { return StoredExperimentState(id) == "PAUSED"; }));
  ASSERT_TRUE(Until([&] { return StoredTrial(1).state == "PAUSED"; })) << StoredTrial(1).state;

  ASSERT_TRUE(Act(id, "activate").ok());
  const bus::WorkloadStart& second = NthStart(1);
  EXPECT_EQ(second.task_id, "trial-1-2");
  EXPECT_EQ(StoredTrial(1).restarts, 0) << "a pause is not a failure";
  EXPECT_EQ(StoredExperimentState(id), "ACTIVE");
}

// kSingleTrial with `searcher_fields` added to its searcher.
std::string WarmStarted(const std::string& searcher_fields) {
  std::string config = kSingleTrial;
  const std::string end = "max_length: {batches: 100}";
  config.insert(config.find(end) + end.size(), ", " + searcher_fields);
  return config;
}

TEST_F(ExperimentServiceTest, AWarmStartFromATrialGivesItsLatestCheckpointToEveryRun) {
  records_.SeedCheckpoint(40, {"ckpt-early", 7, 100, 1.0});
  records_.SeedCheckpoint(40, {"ckpt-late", 7, 200, 2.0});
  ASSERT_GT(Create(WarmStarted("source_trial_id: 7")), 0);
  const bus::WorkloadStart first = NthStart(0);
  EXPECT_EQ(first.env.at("DET_LATEST_CHECKPOINT"), "ckpt-late") << "trial 7's latest by steps";
  Ends(first, 1);  // max_restarts 1: a second run, still without a checkpoint of its own
  EXPECT_EQ(NthStart(1).env.at("DET_LATEST_CHECKPOINT"), "ckpt-late");
}

TEST_F(ExperimentServiceTest, AWarmStartFromACheckpointStartsThereAndAMissingOneIsRefused) {
  records_.SeedCheckpoint(40, {"ckpt-early", 7, 100, 1.0});
  ASSERT_GT(Create(WarmStarted("source_checkpoint_uuid: ckpt-early")), 0);
  EXPECT_EQ(NthStart(0).env.at("DET_LATEST_CHECKPOINT"), "ckpt-early");

  auto unknown = Call<bus::ExperimentCreateRequest, bus::ExperimentCreateReply>(
      {.config_yaml = WarmStarted("source_checkpoint_uuid: nowhere"), .owner_id = 1});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(
      unknown.status().message().find("searcher.source_checkpoint_uuid: no checkpoint nowhere"),
      std::string::npos)
      << unknown.status().ToString();
  auto no_checkpoint = Call<bus::ExperimentCreateRequest, bus::ExperimentCreateReply>(
      {.config_yaml = WarmStarted("source_trial_id: 99"), .owner_id = 1});
  ASSERT_FALSE(no_checkpoint.ok());
  EXPECT_NE(no_checkpoint.status().message().find("trial 99 has no checkpoint"), std::string::npos)
      << no_checkpoint.status().ToString();
  EXPECT_EQ(records_.Read().experiments.size(), 1u) << "nothing stored for the refused ones";
}

// Determined's DeleteCheckpoints: all the checkpoints named are checked before any goes (another
// owner's, a registered one: refused, nothing started); allowed ones are removed as GC removes
// them (a removal task on an agent) and marked DELETED when it succeeds.
TEST_F(ExperimentServiceTest, DeletedCheckpointsAreCheckedTogetherThenRemovedByATask) {
  const int64_t id = Create();
  NthStart(0);  // the trial's run
  records_.SeedCheckpoint(id, {"ckpt-kept", 1, 100, 1.0});
  records_.SeedCheckpoint(id, {"ckpt-gone", 1, 200, 2.0});
  records_.SeedRegistered("ckpt-kept");
  auto Delete = [&](std::vector<std::string> uuids, int64_t requester) {
    return Call<bus::CheckpointDeleteRequest, bus::CheckpointDeleteReply>(
        {std::move(uuids), requester, false});
  };
  auto registered = Delete({"ckpt-gone", "ckpt-kept"}, 1);
  ASSERT_FALSE(registered.ok());
  EXPECT_EQ(registered.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(registered.status().message().find("ckpt-kept"), std::string::npos);
  auto others = Delete({"ckpt-gone"}, 2);
  EXPECT_EQ(others.status().code(), StatusCode::kPermissionDenied) << others.status().ToString();
  EXPECT_EQ(Delete({"nowhere"}, 1).status().code(), StatusCode::kNotFound);

  auto deleted = Delete({"ckpt-gone"}, 1);
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_EQ(deleted->removing, 1);
  const bus::WorkloadStart& removal = NthStart(1);
  EXPECT_EQ(removal.task_id.rfind("checkpoint-gc-" + std::to_string(id), 0), 0u) << removal.task_id;
  Ends(removal, 0);
  // The service reads its removals' outcomes every half second (simulated here).
  ASSERT_TRUE(Until([&] {
    clock_.Advance(100ms);
    return !records_.Read().removed_checkpoints.empty();
  }));
  EXPECT_EQ(records_.Read().removed_checkpoints, (std::vector<std::string>{"ckpt-gone"}));
  EXPECT_EQ(agent_->starts.size(), 2u) << "the refused deletions started nothing";
}

TEST_F(ExperimentServiceTest, ContinueTrainsTheFinishedTrialAgainUnderTheChangedConfig) {
  const int64_t id = Create();
  const bus::WorkloadStart first = NthStart(0);
  ASSERT_TRUE(Report({first.allocation_id, "validation", 100, R"({"loss": 0.25})"}).ok());
  Ends(first, 0);
  ASSERT_TRUE(Until([&] { return StoredExperimentState(id) == "COMPLETED"; }));
  auto Continue = [&](bus::ExperimentContinueRequest request) {
    return Call<bus::ExperimentContinueRequest, bus::ExperimentContinueReply>(request);
  };
  EXPECT_EQ(Continue({id, "hyperparameters: {lr: 0.5}"}).status().code(),
            StatusCode::kInvalidArgument)
      << "the trial's hyperparameters are its own";
  EXPECT_EQ(Continue({id, "- a list"}).status().code(), StatusCode::kInvalidArgument);
  // Overrides that no config reader could walk are refused, naming them, never a crash.
  EXPECT_EQ(Continue({id, "searcher: 5"}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Continue({id, "", {"searcher=5"}}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Continue({id, "", {"hyperparameters.x=&a [*a]"}}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Continue({id, "checkpoint_storage: {type: shared_fs, host_path: /elsewhere}"})
                .status()
                .code(),
            StatusCode::kInvalidArgument)
      << "its checkpoints stay where they are";
  EXPECT_EQ(Continue({id + 1}).status().code(), StatusCode::kNotFound);

  auto continued =
      Continue({id, "description: longer\nname: longer-run", {"searcher.max_length.batches=300"}});
  ASSERT_TRUE(continued.ok()) << continued.status().ToString();
  EXPECT_EQ(continued->state, "ACTIVE");
  const bus::WorkloadStart& second = NthStart(1);
  EXPECT_EQ(second.task_id, "trial-1-2") << "the same trial, its next run";
  EXPECT_EQ(second.env.at("DET_MAX_LENGTH"), "300");
  const auto stored = records_.Read();
  EXPECT_EQ(stored.experiments.at(id).state, "ACTIVE");
  EXPECT_FALSE(stored.experiments.at(id).end_ns.has_value()) << "no longer over";
  EXPECT_NE(stored.experiments.at(id).config.find("300"), std::string::npos)
      << stored.experiments.at(id).config;
  EXPECT_NE(stored.experiments.at(id).config.find("longer"), std::string::npos);
  EXPECT_EQ(stored.experiments.at(id).name, "longer-run")
      << "a new name in the override is its name";
  EXPECT_EQ(StoredTrial(1).state, "ACTIVE");
  EXPECT_FALSE(StoredTrial(1).end_ns.has_value());
  EXPECT_EQ(Continue({id}).status().code(), StatusCode::kFailedPrecondition)
      << "an active experiment is not continued";

  // The validation at the old length is not the end any more; the new length's is.
  ASSERT_TRUE(Report({second.allocation_id, "validation", 300, R"({"loss": 0.125})"}).ok());
  Ends(second, 0);
  ASSERT_TRUE(Until([&] { return StoredExperimentState(id) == "COMPLETED"; }))
      << StoredExperimentState(id);
  EXPECT_EQ(StoredTrial(1).state, "COMPLETED");
  EXPECT_EQ(agent_->starts.size(), 2u);
}

TEST_F(ExperimentServiceTest, AnErroredSingleTrialIsContinuedWithItsRestartsForgiven) {
  const int64_t id = Create();
  Ends(NthStart(0), 137);
  Ends(NthStart(1), 137);  // past max_restarts (1)
  ASSERT_TRUE(Until([&] { return StoredExperimentState(id) == "ERROR"; }));
  auto continued = Call<bus::ExperimentContinueRequest, bus::ExperimentContinueReply>({id});
  ASSERT_TRUE(continued.ok()) << continued.status().ToString();
  const bus::WorkloadStart& third = NthStart(2);
  EXPECT_EQ(third.task_id, "trial-1-3");
  EXPECT_EQ(StoredTrial(1).restarts, 0);
  // A master started anew goes on with it: stored ACTIVE, not over, with its search reopened.
  StopService();
  StartService();
  ASSERT_TRUE(Report({third.allocation_id, "validation", 100, R"({"loss": 0.5})"}).ok());
  Ends(third, 0);
  ASSERT_TRUE(Until([&] { return StoredExperimentState(id) == "COMPLETED"; }))
      << StoredExperimentState(id);
}

}  // namespace
}  // namespace det::master

#pragma once

// A cluster over several hosts (tests/testing/virtual_network.h): PostgreSQL on `db`, det-master
// on `master`, det-agent on `agent-1`..`agent-3`, and the det CLI and the REST calls on `client`.
// Cloud tests add the fake EC2 on `cloud` (each instance it boots becomes a host of its own, whose
// processes all die when the instance is terminated, as a real instance's) and det-autoscaler on
// `autoscaler`, sizing the pool `cloud`.
// Each is a real process of the build, configured as a user would (master.yaml, agent.yaml,
// CURVE on every bus socket, keys made by the test), reaching the others only by address.
//
// Faults are injected with the helpers below; CheckNothingLost() is the verdict every fault test
// ends with: the experiment completed, every trial's metrics are complete with no gap and no
// duplicate, no process is left on any agent host but its agent, no secret was logged. Recovery
// times go to the test's output and to $DET_MULTIHOST_REPORT (one Markdown table row per fault)
// when that is set.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "storage/local_postgres.h"
#include "tests/testing/cluster_fixture.h"
#include "tests/testing/test_util.h"
#include "tests/testing/virtual_network.h"

namespace det::testing {

// How the example trial reports, for CheckNothingLost: training metrics every 5 batches,
// validation every `validation_period`, up to `batches`.
struct TrialShape {
  int batches = 200;
  int validation_period = 20;
};

struct MetricPoint {
  int64_t step = 0;
  int run_id = 0;
};

// A trial's last training metric at a moment: what recovery is measured from.
struct ProgressMark {
  int64_t trial_id = 0;
  MetricPoint last;
  std::chrono::steady_clock::time_point at;
};

class MultiHostTest : public ::testing::Test {
 protected:
  static constexpr int kAgents = 3;
  static constexpr const char* kAgentReconnectWait = "8s";
  static constexpr const char* kAgentSilenceLimit = "2s";

  void SetUp() override;
  void TearDown() override;

  // --- the cluster -------------------------------------------------------------------------
  void StartDatabase();
  // The master on `master` (again after a kill: same config, ports and database).
  void StartMaster();
  void StartAgent(const std::string& host);
  // Extra master.yaml top-level sections (resource_pools, ...).
  virtual std::string ExtraMasterConfig() const { return ""; }
  std::string AgentHost(int i) const { return "agent-" + std::to_string(i); }
  const VirtualHost& Host(const std::string& name) const { return net_->host(name); }

  // --- the cloud ------------------------------------------------------------------------------
  // fake-ec2 on `cloud`, booting instances as hosts; a thread ends terminated instances' hosts.
  void StartCloud();
  void StartAutoscaler();
  // The master.yaml pools: `default` (the agents) and `cloud` (aws, on the fake), its provider
  // section ending with `extra_provider_lines` ("      spot: true\n").
  std::string CloudPools(const std::string& extra_provider_lines = "") const;
  // POST (a body) or GET /_fake/`path` of the fake EC2; null when it did not answer.
  nlohmann::json CloudAdmin(const std::string& path, const nlohmann::json& body = nullptr);
  // fake-s3 on `cloud` (kS3Port) with bucket `bucket`, its objects under the test's folder; its
  // admin endpoints through S3Admin. Stopped at TearDown.
  void StartS3(const std::string& bucket);
  nlohmann::json S3Admin(const std::string& path, const nlohmann::json& body = nullptr);
  std::string S3Endpoint() const;
  // GET (no body) or POST of /_fake/`path` on a fake on `cloud` listening on `port`.
  nlohmann::json FakeAdmin(int port, const std::string& path, const nlohmann::json& body);
  // The fake's instances (id, state, ...).
  nlohmann::json Instances() { return CloudAdmin("state")["instances"]; }
  // Every instance the fake launched is terminated (within a minute).
  void CheckNoInstanceLeft();

  // --- the user's view, from `client` --------------------------------------------------------
  // det with admin's credentials; its output and errors.
  std::string Det(const std::string& args);
  // A REST call as admin: the JSON answer (null when none).
  // The answer's JSON (a stream's lines' results as an array), null when there was none.
  nlohmann::json Rest(const std::string& method, const std::string& path,
                      const std::string& body = "");
  // The example experiment with `shape`, `step_seconds` per batch, and `edit` applied; its id.
  int64_t CreateExperiment(const TrialShape& shape, double step_seconds,
                           const std::function<void(nlohmann::json&)>& edit = {});
  nlohmann::json Describe(int64_t experiment_id);
  // The first trial's summary once `done` holds for it (null after `timeout`).
  nlohmann::json WaitForTrial(int64_t experiment_id,
                              const std::function<bool(const nlohmann::json&)>& done,
                              std::chrono::seconds timeout = std::chrono::seconds(120));
  // The experiment's end state ("" when it did not end within `timeout`).
  std::string WaitEnded(int64_t experiment_id,
                        std::chrono::seconds timeout = std::chrono::seconds(240));
  // The agent host running the experiment's first trial now ("" when none).
  std::string HostRunningTrial(int64_t experiment_id);
  // Steps the trial has reported metrics of `kind` ("training" or "validation") for, in order.
  std::vector<int64_t> MetricSteps(int64_t trial_id, const std::string& kind);
  std::vector<MetricPoint> MetricPoints(int64_t trial_id, const std::string& kind);

  // --- faults and verdicts -------------------------------------------------------------------
  // Where the first trial's training metrics stand now (take it just before a fault).
  ProgressMark MarkProgress(int64_t experiment_id);
  // Seconds from `mark` until the trial reports a training step past it (the run goes on) or,
  // `in_a_new_run`, any step of a later run (the run was lost and another resumes from the
  // checkpoint): the time to recover. -1 after two minutes.
  double SecondsUntilProgress(const ProgressMark& mark, bool in_a_new_run);
  // The experiment completed; each trial's training steps are every 5th up to `shape.batches`,
  // validation every `validation_period`, each once; no agent host runs anything but its agent.
  void CheckNothingLost(int64_t experiment_id, const TrialShape& shape);
  // No log of any component (files under the test's folder, `det master logs`) holds a secret:
  // the database or admin password, a session token, the AWS secret key, a CURVE secret key.
  void CheckNoSecretLogged();
  // Prints and records a row of the fault report.
  void Report(const std::string& fault, const std::string& outcome, double recovery_seconds);
  // The pid of the process on `host` whose command line contains `needle` (-1: none).
  pid_t FindProcess(const std::string& host, const std::string& needle) const;
  std::string ReadLog(const std::string& name) const;

  std::unique_ptr<VirtualNetwork> net_;
  std::unique_ptr<Process> s3_;
  fs::path dir_;
  std::unique_ptr<storage::LocalPostgres> pg_;
  std::unique_ptr<Process> master_;
  std::unique_ptr<Process> cloud_;
  std::unique_ptr<Process> autoscaler_;
  int autoscaler_starts_ = 0;
  std::atomic<bool> reaping_{false};
  std::thread instance_reaper_;
  std::map<std::string, std::unique_ptr<Process>> agents_;
  int master_starts_ = 0;
  std::string token_;  // admin's REST session
};

}  // namespace det::testing

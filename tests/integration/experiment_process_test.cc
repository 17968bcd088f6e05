// Experiments end to end: the real det-master (experiment service, Core API), real agents running
// the example's Python trials through the harness, the det CLI, PostgreSQL.
#include <gtest/gtest.h>
#include <httplib.h>
#include <yaml-cpp/yaml.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <set>

#include "common/base64.h"
#include "common/clock.h"
#include "master/auth/allocation_token.h"
#include "storage/agents_repo.h"
#include "storage/database.h"
#include "storage/experiments_repo.h"
#include "storage/metrics_repo.h"
#include "tests/testing/experiment_fixture.h"
#include "tests/testing/rest_client.h"
#include "tests/testing/test_util.h"

namespace det {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

class ExperimentProcessTest : public testing::ExperimentFixture {
 protected:
  std::vector<int64_t> MetricSteps(int64_t trial_id, const std::string& kind) {
    storage::Database db(db_, 1);
    std::vector<int64_t> steps;
    EXPECT_TRUE(db.Run([&](pqxx::work& tx) {
                    for (const auto& point : storage::ReadMetrics(tx, trial_id, kind, 0, 100000)) {
                      steps.push_back(point.step);
                    }
                    return Status::Ok();
                  }).ok());
    return steps;
  }
  // The experiment's trials that have not ended, one line each (what a stuck search waits on).
  std::string StuckTrials(int64_t experiment_id) {
    std::string lines = "trials not ended:\n";
    for (const auto& trial : Describe(experiment_id)["trials"]) {
      const std::string state = trial.value("state", "");
      if (state == "COMPLETED" || state == "CANCELED" || state == "ERROR") continue;
      lines += "  trial " + trial["id"].dump() + " " + state + " task " +
               trial.value("task_id", "") + " " + trial.value("task_state", "") + " run " +
               trial["run_id"].dump() + " steps " + trial["steps_completed"].dump() + "\n";
    }
    return lines;
  }
  // Each trial's validation loss by step, trials in the order they first reported one.
  std::vector<std::pair<int64_t, std::map<int64_t, double>>> ValidationLossesInRunOrder(
      int64_t experiment_id) {
    storage::Database db(db_, 1);
    std::vector<std::pair<int64_t, std::map<int64_t, double>>> trials;
    EXPECT_TRUE(db.Run([&](pqxx::work& tx) {
                    for (const auto& row : tx.exec_params(
                             "SELECT m.trial_id, m.step, (m.metrics->>'validation_loss')::float8"
                             " FROM metrics m JOIN trials t ON t.id = m.trial_id"
                             " WHERE t.experiment_id = $1 AND m.kind = 'validation'"
                             " ORDER BY min(m.reported_at) OVER (PARTITION BY m.trial_id),"
                             " m.trial_id, m.step",
                             experiment_id)) {
                      const auto trial_id = row[0].as<int64_t>();
                      if (trials.empty() || trials.back().first != trial_id) {
                        trials.push_back({trial_id, {}});
                      }
                      trials.back().second[row[1].as<int64_t>()] = row[2].as<double>();
                    }
                    return Status::Ok();
                  }).ok());
    return trials;
  }
  // The REST reads that overlay many trials' curves (the WebUI's experiment and compare pages)
  // give each trial's stored validation losses.
  void ExpectOverlaysShowEveryTrialsStoredLosses(int64_t experiment_id) {
    std::map<int64_t, std::map<int64_t, double>> stored;
    for (auto& [trial, losses] : ValidationLossesInRunOrder(experiment_id)) stored[trial] = losses;
    testing::RestClient rest(std::stoi(rest_port_));
    const std::string token = rest.Login("admin", testing::kAdminPassword);
    const std::string path =
        "/api/v1/experiments/" + std::to_string(experiment_id) + "/metrics-series";
    auto overlay = rest.Send("GET", path + "?name=validation_loss&maxPoints=1000", token);
    ASSERT_EQ(overlay.status, 200) << overlay.text;
    const auto& names = overlay.body["names"]["validation"];
    EXPECT_NE(std::find(names.begin(), names.end(), "validation_loss"), names.end())
        << overlay.text;
    ASSERT_EQ(overlay.body["series"].size(), stored.size()) << overlay.text;
    for (const auto& s : overlay.body["series"]) {
      std::map<int64_t, double> shown;
      for (size_t i = 0; i < s["steps"].size(); ++i) shown[s["steps"][i]] = s["values"][i];
      EXPECT_EQ(shown, stored[s["trialId"].get<int64_t>()]) << s.dump();
    }
    EXPECT_EQ(rest.Send("GET", path + "?name=validation_loss&group=Bad-Group", token).status, 400);
    EXPECT_EQ(rest.Send("GET", "/api/v1/experiments/99999999/metrics-series", token).status, 404);

    // Determined's CompareTrials for two of them.
    const int64_t first = stored.begin()->first, second = std::next(stored.begin())->first;
    auto compared = rest.Send("GET",
                              "/api/v1/trials/time-series?trialIds=" + std::to_string(second) +
                                  "&trialIds=" + std::to_string(first) +
                                  "&metricNames=validation_loss&maxDatapoints=100",
                              token);
    ASSERT_EQ(compared.status, 200) << compared.text;
    ASSERT_EQ(compared.body["trials"].size(), 2u) << compared.text;
    EXPECT_EQ(compared.body["trials"][0]["trial"]["id"], second) << compared.text;
    const auto& metrics = compared.body["trials"][1]["metrics"][0];
    EXPECT_EQ(metrics["group"], "validation");
    std::map<int64_t, double> shown;
    for (const auto& point : metrics["data"]) {
      shown[point["batches"]] = point["values"]["validation_loss"];
      EXPECT_GT(ParseRfc3339Utc(point.value("time", "")).value_or(0), 0) << point.dump();
    }
    EXPECT_EQ(shown, stored[first]) << compared.text;
    EXPECT_EQ(compared.body["trials"][0]["trial"]["experimentId"], experiment_id);
    // The proto field names, as Determined's gateway reads them too.
    EXPECT_EQ(rest.Send("GET",
                        "/api/v1/trials/time-series?trial_ids=" + std::to_string(first) +
                            "&metric_names=validation_loss&metric_type=METRIC_TYPE_VALIDATION"
                            "&max_datapoints=100",
                        token)
                  .body["trials"][0]["metrics"][0]["data"],
              metrics["data"]);
    EXPECT_EQ(rest.Send("GET", "/api/v1/trials/time-series?trial_ids=99999999", token).status, 404);
    EXPECT_EQ(rest.Send("GET", "/api/v1/trials/time-series?trial_ids=x", token).status, 400);
    EXPECT_EQ(rest.Send("GET",
                        "/api/v1/trials/time-series?trial_ids=" + std::to_string(first) +
                            "&group=validation&metric_type=METRIC_TYPE_TRAINING",
                        token)
                  .status,
              400);
    EXPECT_EQ(rest.Send("GET", "/api/v1/experiments/0/metrics-series", token).status, 404);
  }
  // The token the master gives run `run` of the trial (signed with the cluster's stored secret).
  std::string RunToken(int64_t trial_id, int run) {
    storage::Database db(db_, 1);
    std::string secret;
    EXPECT_TRUE(db.Run([&](pqxx::work& tx) {
                    secret = storage::EnsureTokenSecret(tx, "a secret is stored already");
                    return Status::Ok();
                  }).ok());
    return master::AllocationTokens(secret).Issue("trial-" + std::to_string(trial_id) + "-" +
                                                  std::to_string(run) + ".0");
  }
  static std::vector<int64_t> Every(int64_t period, int64_t last) {
    std::vector<int64_t> steps;
    for (int64_t s = period; s <= last; s += period) steps.push_back(s);
    return steps;
  }
  // kill -9 of the trial's Python process (found by its working folder under this test's).
  bool KillTrialProcess() {
    for (const auto& entry : fs::directory_iterator("/proc")) {
      std::error_code ec;
      const fs::path cwd = fs::read_symlink(entry.path() / "cwd", ec);
      if (ec || cwd.string().rfind(dir_.string(), 0) != 0) continue;
      const std::string text = testing::ReadProcFile(entry.path() / "cmdline");
      if (text.find("train.py") == std::string::npos) continue;
      return kill(std::stoi(entry.path().filename()), SIGKILL) == 0;
    }
    return false;
  }
};

TEST_F(ExperimentProcessTest, SingleTrialCompletesWithEveryMetricStoredOnce) {
  auto agent = StartAgent("agent-e", 2);
  const int64_t id = Create(Config("const.yaml"));
  ASSERT_GT(id, 0);
  EXPECT_EQ(WaitEnded(id), "COMPLETED") << Log("master.log");
  auto trial = Describe(id)["trials"][0];
  EXPECT_EQ(trial.value("state", ""), "COMPLETED");
  EXPECT_EQ(trial.value("steps_completed", 0), 200);
  const int64_t trial_id = trial.value("id", int64_t{0});
  EXPECT_EQ(MetricSteps(trial_id, "training"), Every(5, 200));
  EXPECT_EQ(MetricSteps(trial_id, "validation"), Every(20, 200));
  EXPECT_NE(trial.value("latest_checkpoint", ""), "");
  EXPECT_TRUE(
      fs::exists(dir_ / "checkpoints" / trial.value("latest_checkpoint", "") / "state.json"));
}

// det experiment create --follow, logs, list-trials and list-checkpoints (and the REST listing).
TEST_F(ExperimentProcessTest, CreateFollowShowsTheOutputAndTheCheckpointsAreListed) {
  auto agent = StartAgent("agent-f", 1);
  const std::string followed =
      Det("experiment create --follow " + Config("const.yaml") + " " + Example() + "; echo rc=$?");
  EXPECT_NE(followed.find("Created experiment "), std::string::npos) << followed;
  EXPECT_NE(followed.find("] trial 1 run 1: starting at step 0 of 200"), std::string::npos)
      << followed;
  EXPECT_NE(followed.find("[trial 1] ["), std::string::npos) << followed;
  EXPECT_NE(followed.find("trial 1 done at step 200"), std::string::npos) << followed;
  EXPECT_NE(followed.find("experiment 1 ended COMPLETED\nrc=0"), std::string::npos) << followed;
  EXPECT_NE(Det("experiment logs 1").find("trial 1 done at step 200"), std::string::npos);

  const auto trials = nlohmann::json::parse(Det("--json experiment list-trials 1"), nullptr, false);
  ASSERT_TRUE(trials.is_array());
  EXPECT_EQ(trials.size(), 1u);
  const auto checkpoints =
      nlohmann::json::parse(Det("--json experiment list-checkpoints 1"), nullptr, false);
  ASSERT_TRUE(checkpoints.is_array());
  ASSERT_EQ(checkpoints.size(), 10u) << checkpoints.dump();  // every 20 steps of 200
  EXPECT_EQ(checkpoints.back()["steps_completed"], 200);
  EXPECT_EQ(checkpoints.back()["state"], "COMPLETED");
  EXPECT_GT(checkpoints.back()["size_bytes"].get<int64_t>(), 0);
  EXPECT_NE(
      Det("experiment list-checkpoints 1").find(checkpoints.back()["uuid"].get<std::string>()),
      std::string::npos);
  EXPECT_NE(Det("experiment list-checkpoints 99").find("experiment 99 not found"),
            std::string::npos);

  testing::RestClient rest(std::stoi(rest_port_));
  const std::string token = rest.Login("admin", testing::kAdminPassword);
  const auto listed = rest.Send("GET", "/api/v1/experiments/1/checkpoints", token);
  EXPECT_EQ(listed.body["checkpoints"].size(), 10u) << listed.text;
  EXPECT_EQ(rest.Send("GET", "/api/v1/experiments/99/checkpoints", token).status, 404);
}

// With security.tls, HTTP is HTTPS: clients that trust the certificate get answers, plain HTTP
// gets none, and trial runs (given the certificate as DET_MASTER_CERT) report over it.
class TlsExperimentTest : public ExperimentProcessTest {
 protected:
  void SetUp() override {
    certs_ = fs::temp_directory_path() / ("det-tls-" + bus::RandomId());
    fs::create_directories(certs_);
    testing::Shell(
        "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
        "-days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout " +
        (certs_ / "master.key").string() + " -out " + (certs_ / "master.crt").string() + " 2>&1");
    ExperimentProcessTest::SetUp();
  }
  void TearDown() override {
    ExperimentProcessTest::TearDown();
    fs::remove_all(certs_);
  }
  std::string ExtraSecurityConfig() const override {
    return "  tls:\n    cert: " + (certs_ / "master.crt").string() +
           "\n    key: " + (certs_ / "master.key").string() + "\n";
  }
  fs::path certs_;
};

TEST_F(TlsExperimentTest, RestAndTrialCodeSpeakHttps) {
  httplib::SSLClient https("127.0.0.1", std::stoi(rest_port_));
  https.set_ca_cert_path((certs_ / "master.crt").string().c_str());
  https.enable_server_certificate_verification(true);
  auto info = https.Get("/api/v1/master");
  ASSERT_TRUE(info) << httplib::to_string(info.error());
  EXPECT_EQ(info->status, 200);
  httplib::Client plain("127.0.0.1", std::stoi(rest_port_));
  auto refused = plain.Get("/api/v1/master");
  EXPECT_TRUE(!refused || refused->status != 200);

  auto agent = StartAgent("agent-tls", 1);
  const int64_t id = Create(Config("const.yaml"));
  ASSERT_GT(id, 0);
  EXPECT_EQ(WaitEnded(id), "COMPLETED") << Log("master.log");
  EXPECT_EQ(Describe(id)["trials"][0].value("steps_completed", 0), 200);
}

// det experiment list and GET /api/v1/experiments filter by state, name and label, then page.
TEST_F(ExperimentProcessTest, ExperimentListFiltersAndPages) {
  for (const std::string name : {"alpha", "beta", "alphabet"}) {  // no agent: they stay ACTIVE
    Create(Config("const.yaml", [&](YAML::Node& c) {
      c["name"] = name;
      c["labels"].push_back(name == "beta" ? "b" : "a");
    }));
  }
  auto listed = nlohmann::json::parse(Det("--json experiment list --name alpha"), nullptr, false);
  ASSERT_TRUE(listed.is_array()) << listed;
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0]["name"], "alphabet");  // newest first
  EXPECT_EQ(nlohmann::json::parse(Det("--json experiment list --label b"), nullptr, false).size(),
            1u);
  EXPECT_EQ(Det("--json experiment list --state COMPLETED"), "[]\n");
  EXPECT_NE(Det("experiment list --limit 1").find("(1 of 3 matching;"), std::string::npos);

  testing::RestClient rest(std::stoi(rest_port_));
  const std::string token = rest.Login("admin", testing::kAdminPassword);
  auto page = rest.Send("GET", "/api/v1/experiments?limit=2&offset=2", token);
  ASSERT_EQ(page.body["experiments"].size(), 1u) << page.text;
  EXPECT_EQ(page.body["experiments"][0]["name"], "alpha");  // the oldest
  EXPECT_EQ(page.body["pagination"]["total"], 3);
  auto states = rest.Send("GET", "/api/v1/experiments?states=PAUSED,ACTIVE&label=a", token);
  EXPECT_EQ(states.body["experiments"].size(), 2u) << states.text;
  EXPECT_EQ(rest.Send("GET", "/api/v1/experiments?limit=lots", token).status, 400);
  EXPECT_EQ(rest.Send("GET", "/api/v1/experiments?limit=20000", token).status, 400);
}

// det trial kill: the run stops, the trial ends CANCELED (not restarted), the experiment ends.
TEST_F(ExperimentProcessTest, TrialKillStopsTheRunAndTheTrialEndsCanceled) {
  auto agent = StartAgent("agent-k", 1);
  const int64_t id = Create(
      Config("const.yaml", [](YAML::Node& c) { c["hyperparameters"]["step_seconds"] = 0.02; }));
  ASSERT_TRUE(WaitForTrial(id, [](auto& t) { return t.value("steps_completed", 0) >= 20; }));
  const int64_t trial_id = Describe(id)["trials"][0].value("id", int64_t{0});
  const std::string killed = Det("trial kill " + std::to_string(trial_id) + "; echo rc=$?");
  EXPECT_NE(killed.find("rc=0"), std::string::npos) << killed;
  WaitEnded(id);
  auto trial = Describe(id)["trials"][0];
  EXPECT_EQ(trial.value("state", ""), "CANCELED") << trial.dump();
  EXPECT_EQ(trial.value("run_id", 0), 1) << "a killed trial is not restarted";
  EXPECT_LT(trial.value("steps_completed", 0), 200);
  EXPECT_NE(Det("trial kill " + std::to_string(trial_id)).find("it is CANCELED"),
            std::string::npos);
  testing::RestClient rest(std::stoi(rest_port_));
  const std::string token = rest.Login("admin", testing::kAdminPassword);
  EXPECT_EQ(rest.Send("POST", "/api/v1/trials/999999/kill", token).status, 404);
  // Its metrics so far, through the user REST API.
  const std::string metrics_path = "/api/v1/trials/" + std::to_string(trial_id) + "/metrics";
  auto training = rest.Send("GET", metrics_path + "?limit=2", token);
  ASSERT_EQ(training.body["metrics"].size(), 2u) << training.text;
  EXPECT_EQ(training.body["metrics"][0]["step"], 5);
  EXPECT_EQ(training.body["metrics"][1]["step"], 10);
  EXPECT_TRUE(training.body["metrics"][0]["metrics"].contains("loss")) << training.text;
  // A chart's read: with max_points, the whole curve, cut to its extremes when longer.
  const auto every = rest.Send("GET", metrics_path + "?limit=10000", token).body["metrics"];
  auto chart = rest.Send("GET", metrics_path + "?maxPoints=2", token);
  ASSERT_EQ(chart.status, 200) << chart.text;
  EXPECT_EQ(chart.body["downsampled"], every.size() > 2) << chart.text;
  EXPECT_EQ(chart.body["metrics"].front()["step"], every.front()["step"]) << chart.text;
  EXPECT_EQ(chart.body["metrics"].back()["step"], every.back()["step"]) << chart.text;
  auto too_few = rest.Send("GET", metrics_path + "?maxPoints=1", token);
  EXPECT_EQ(too_few.status, 400);
  EXPECT_NE(too_few.text.find("maxPoints: 1 is outside 2..20000"), std::string::npos)
      << too_few.text;
  auto validation = rest.Send("GET", metrics_path + "?kind=validation&afterStep=0", token);
  ASSERT_FALSE(validation.body["metrics"].empty()) << validation.text;
  EXPECT_EQ(validation.body["metrics"][0]["step"], 20);
  // A group of the user's own that was never written is empty; a name no group may have is refused.
  auto custom = rest.Send("GET", metrics_path + "?kind=never_written", token);
  EXPECT_EQ(custom.status, 200) << custom.text;
  EXPECT_TRUE(custom.body["metrics"].empty()) << custom.text;
  auto refused = rest.Send("GET", metrics_path + "?kind=Not-A-Group", token);
  EXPECT_EQ(refused.status, 400);
  EXPECT_NE(refused.text.find("Not-A-Group"), std::string::npos) << refused.text;
  EXPECT_EQ(rest.Send("GET", metrics_path + "?kind=checkpoint", token).status, 400);
  EXPECT_EQ(rest.Send("GET", "/api/v1/trials/999999/metrics", token).status, 404);
  EXPECT_EQ(rest.Send("POST", "/api/v1/trials/" + std::to_string(trial_id) + "/kill", token).status,
            400);
}

TEST_F(ExperimentProcessTest, PauseAndActivateResumeFromTheCheckpointWithoutGapOrDuplicate) {
  auto agent = StartAgent("agent-p", 2);
  const int64_t id = Create(
      Config("const.yaml", [](YAML::Node& c) { c["hyperparameters"]["step_seconds"] = 0.02; }));
  ASSERT_TRUE(WaitForTrial(id, [](auto& t) { return t.value("steps_completed", 0) >= 40; }));
  EXPECT_NE(Det("experiment pause " + std::to_string(id)).find("PAUSED"), std::string::npos);
  ASSERT_TRUE(WaitForTrial(id, [](auto& t) { return t.value("task_state", "") == ""; }))
      << "the paused trial's run did not end";
  auto paused = Describe(id)["trials"][0];
  EXPECT_EQ(paused.value("state", ""), "PAUSED");
  EXPECT_LT(paused.value("steps_completed", 0), 200);
  EXPECT_NE(Det("experiment activate " + std::to_string(id)).find("ACTIVE"), std::string::npos);
  EXPECT_EQ(WaitEnded(id), "COMPLETED") << Log("master.log");
  auto trial = Describe(id)["trials"][0];
  EXPECT_EQ(trial.value("run_id", 0), 2);
  EXPECT_EQ(trial.value("restarts", -1), 0) << "a pause is not a failure";
  const int64_t trial_id = trial.value("id", int64_t{0});
  EXPECT_EQ(MetricSteps(trial_id, "training"), Every(5, 200));
  EXPECT_EQ(MetricSteps(trial_id, "validation"), Every(20, 200));
  const std::string logs = Det("trial logs " + std::to_string(trial_id));
  // The run checkpoints where it stops (it checks for the signal every batch); run 2 goes on
  // from that step.
  const size_t stopped = logs.find("stopping at step ");
  ASSERT_NE(stopped, std::string::npos) << logs;
  const int stop_step = std::atoi(logs.c_str() + stopped + strlen("stopping at step "));
  EXPECT_GE(stop_step, paused.value("steps_completed", 0));
  EXPECT_NE(logs.find("run 2: starting at step " + std::to_string(stop_step) + " "),
            std::string::npos)
      << logs;
}

TEST_F(ExperimentProcessTest, KilledTrialProcessCountsARestartAndResumes) {
  auto agent = StartAgent("agent-k", 2);
  const int64_t id = Create(
      Config("const.yaml", [](YAML::Node& c) { c["hyperparameters"]["step_seconds"] = 0.02; }));
  ASSERT_TRUE(WaitForTrial(id, [](auto& t) { return t.value("steps_completed", 0) >= 40; }));
  ASSERT_TRUE(KillTrialProcess());
  EXPECT_EQ(WaitEnded(id), "COMPLETED") << Log("master.log");
  auto trial = Describe(id)["trials"][0];
  EXPECT_EQ(trial.value("restarts", 0), 1);
  EXPECT_EQ(trial.value("run_id", 0), 2);
  const int64_t trial_id = trial.value("id", int64_t{0});
  EXPECT_EQ(MetricSteps(trial_id, "training"), Every(5, 200));
  EXPECT_EQ(MetricSteps(trial_id, "validation"), Every(20, 200));
  // Run 1's token lapsed when run 2 started: a report from it is refused and nothing is stored.
  const auto stale = testing::RestClient(std::stoi(rest_port_))
                         .Send("POST", "/api/v1/trials/" + std::to_string(trial_id) + "/metrics",
                               RunToken(trial_id, 1),
                               R"({"group": "training", "metrics": {"stepsCompleted": 205,
                                                     "metrics": {"avgMetrics": {"loss": 1.0}}}})");
  EXPECT_EQ(stale.status, 403) << stale.text;
  EXPECT_NE(stale.text.find("run 1 of trial " + std::to_string(trial_id) + ", which has ended"),
            std::string::npos)
      << stale.text;
  EXPECT_EQ(MetricSteps(trial_id, "training"), Every(5, 200));
}

TEST_F(ExperimentProcessTest, PastMaxRestartsTheTrialAndTheExperimentError) {
  auto agent = StartAgent("agent-f", 2);
  const int64_t id = Create(Config("const.yaml", [](YAML::Node& c) {
    c["hyperparameters"]["fail_at_step"] = 30;  // the first run exits 7 there
    c["max_restarts"] = 0;
  }));
  EXPECT_EQ(WaitEnded(id), "ERROR") << Log("master.log");
  auto described = Describe(id);
  EXPECT_EQ(described["trials"][0].value("state", ""), "ERROR");
  EXPECT_EQ(described["trials"][0].value("restarts", 0), 1);
  EXPECT_EQ(described["experiment"].value("message", ""), "every trial failed");
}

// ASHA's rule, replayed: at each rung a trial goes on only if, when it arrived there, it was
// within the top max(floor(n / divisor), 1) of the n trials that had reached the rung. One slot
// runs one trial at a time, so the order trials reached their rungs is the order they ran in.
// (`aggressive` makes one bracket, so every trial shares the same rungs.)
TEST_F(ExperimentProcessTest, AdaptiveAshaExampleContinuesExactlyTheTrialsAshasRulePicks) {
  auto agent = StartAgent("agent-a", 1);
  const int64_t id = Create(Config("adaptive.yaml", [](YAML::Node& c) {
    c["searcher"]["mode"] = "aggressive";
    c["hyperparameters"]["step_seconds"] = 0.0005;
  }));
  EXPECT_EQ(WaitEnded(id), "COMPLETED") << Log("master.log");
  auto trials = Describe(id)["trials"];
  ASSERT_EQ(trials.size(), 16u);
  std::map<int64_t, int64_t> ended_at;
  for (const auto& trial : trials) {
    EXPECT_EQ(trial.value("state", ""), "COMPLETED");
    ended_at[trial.value("id", int64_t{0})] = trial.value("steps_completed", int64_t{0});
  }
  const std::vector<int64_t> rung_batches = {16, 64, 256};
  std::map<int64_t, int64_t> expected_end;
  std::vector<std::vector<double>> rung_losses(rung_batches.size());
  for (const auto& [trial_id, losses] : ValidationLossesInRunOrder(id)) {
    for (size_t k = 0; k < rung_batches.size(); ++k) {
      ASSERT_TRUE(losses.count(rung_batches[k])) << "trial " << trial_id << " rung " << k;
      const double loss = losses.at(rung_batches[k]);
      auto& arrived = rung_losses[k];
      const auto better =
          std::count_if(arrived.begin(), arrived.end(), [&](double other) { return other < loss; });
      arrived.push_back(loss);
      const auto keep = std::max<int64_t>(static_cast<int64_t>(arrived.size()) / 4, 1);
      expected_end[trial_id] = rung_batches[k];
      if (better >= keep) break;
    }
  }
  EXPECT_EQ(ended_at, expected_end);
  EXPECT_EQ(rung_losses[0].size(), 16u);
  ExpectOverlaysShowEveryTrialsStoredLosses(id);
}

// Checkpoint GC by the save_* policy when the trial ends, then `det experiment delete`: the
// files go (removed by a task on the agent), then the rows.
TEST_F(ExperimentProcessTest, CheckpointsThePolicyDoesNotKeepAreRemovedAndDeleteRemovesTheRest) {
  auto agent = StartAgent("agent-g", 1);
  const fs::path folder = dir_ / "checkpoints";
  const int64_t id = Create(Config("const.yaml", [](YAML::Node& c) {
    c["hyperparameters"]["step_seconds"] = 0.001;
    c["checkpoint_storage"]["save_trial_best"] = 0;
    c["checkpoint_storage"]["save_trial_latest"] = 2;
  }));
  EXPECT_NE(Det("experiment delete --yes " + std::to_string(id)).find("cancel or kill it first"),
            std::string::npos);
  EXPECT_EQ(WaitEnded(id), "COMPLETED") << Log("master.log");
  const int64_t trial_id = Describe(id)["trials"][0].value("id", int64_t{0});
  auto states = [&] {
    std::map<int64_t, std::string> by_step;
    storage::Database db(db_, 1);
    EXPECT_TRUE(db.Run([&](pqxx::work& tx) {
                    for (const auto& c : storage::ListCheckpoints(tx, trial_id)) {
                      by_step[c.steps_completed] = c.state;
                    }
                    return Status::Ok();
                  }).ok());
    return by_step;
  };
  auto kept_on_disk = [&] {
    std::set<std::string> names;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(folder, ec)) {
      names.insert(entry.path().filename());
    }
    return names;
  };
  ASSERT_TRUE(testing::Eventually([&] { return kept_on_disk().size() == 2; }, 30s))
      << kept_on_disk().size() << " checkpoint folders left\n"
      << Log("master.log");
  ASSERT_TRUE(testing::Eventually([&] { return states()[20] == "DELETED"; }, 10s));
  std::map<int64_t, std::string> expected;
  for (int64_t step : Every(20, 200)) expected[step] = step >= 180 ? "COMPLETED" : "DELETED";
  EXPECT_EQ(states(), expected);

  EXPECT_NE(Det("experiment delete " + std::to_string(id) + " < /dev/null").find("--yes"),
            std::string::npos)
      << "no terminal to ask: refused";
  EXPECT_NE(Det("experiment delete --yes " + std::to_string(id)).find("DELETING"),
            std::string::npos);
  ASSERT_TRUE(WaitDeleted(id, 30s)) << Log("master.log");
  EXPECT_TRUE(kept_on_disk().empty());
  EXPECT_TRUE(states().empty());
  EXPECT_TRUE(MetricSteps(trial_id, "validation").empty());
  EXPECT_EQ(Det("experiment list").find("linear-regression-const"), std::string::npos);
}

TEST_F(ExperimentProcessTest, BadConfigsAreRefusedNamingTheField) {
  const std::string config = Config("adaptive.yaml", [](YAML::Node& c) {
    c["searcher"].remove("max_trials");
    c["resources"]["slots_per_trial"] = -1;
    c["max_restart"] = 3;
  });
  const std::string out = Det("experiment create " + config + " " + Example());
  EXPECT_NE(out.find("searcher.max_trials"), std::string::npos) << out;
  EXPECT_NE(out.find("resources.slots_per_trial"), std::string::npos) << out;
  EXPECT_NE(out.find("max_restart"), std::string::npos) << out;
  EXPECT_NE(Det("experiment create " + config + " /no/such/folder").find("is not a folder"),
            std::string::npos);
  EXPECT_NE(Det("experiment pause 999").find("experiment 999 not found"), std::string::npos);
}

// The user REST API answers what det answers: field-named errors, then an experiment created,
// read, killed and deleted over HTTP.
TEST_F(ExperimentProcessTest, RestApiCreatesReadsKillsAndDeletesExperiments) {
  httplib::Client http("127.0.0.1", std::stoi(rest_port_));
  auto anonymous = http.Get("/api/v1/experiments");
  ASSERT_TRUE(anonymous);
  EXPECT_EQ(anonymous->status, 401);
  auto login =
      http.Post("/api/v1/auth/login",
                nlohmann::json{{"username", "admin"}, {"password", testing::kAdminPassword}}.dump(),
                "application/json");
  ASSERT_TRUE(login && login->status == 200) << (login ? login->body : "no answer");
  http.set_bearer_token_auth(nlohmann::json::parse(login->body)["token"].get<std::string>());
  auto post = [&](const std::string& path, const nlohmann::json& body) {
    auto res = http.Post(path, body.dump(), "application/json");
    EXPECT_TRUE(res) << path;
    return res ? std::make_pair(res->status, nlohmann::json::parse(res->body, nullptr, false))
               : std::make_pair(0, nlohmann::json());
  };
  YAML::Node bad = YAML::LoadFile(Example() + "/adaptive.yaml");
  bad["searcher"].remove("max_trials");
  bad["max_restart"] = 3;
  auto [status, error] = post("/api/v1/experiments", {{"config", YAML::Dump(bad)}});
  EXPECT_EQ(status, 400);
  const std::string message = error.value("message", "");
  EXPECT_NE(message.find("searcher.max_trials"), std::string::npos) << message;
  EXPECT_NE(message.find("max_restart"), std::string::npos) << message;
  EXPECT_EQ(post("/api/v1/experiments", {{"config", 7}}).first, 400);
  EXPECT_NE(post("/api/v1/experiments",
                 {{"config", "name: x"},
                  {"modelDefinition", {{{"path", "x.py"}, {"type", 48}, {"content", "@@"}}}}})
                .second.value("message", "")
                .find("modelDefinition[\"x.py\"]"),
            std::string::npos);
  EXPECT_NE(post("/api/v1/experiments",
                 {{"config", "name: x"}, {"modelDefinition", {{{"path", "../up.py"}}}}})
                .second.value("message", "")
                .find("leaves its folder"),
            std::string::npos);

  auto agent = StartAgent("agent-h", 1);
  YAML::Node config = YAML::LoadFile(Config("const.yaml", [](YAML::Node& c) {
    c["hyperparameters"]["step_seconds"] = 0.05;
    c["searcher"]["max_length"]["batches"] = 200;  // deprecated: a config warning to answer with
  }));
  // Determined's modelDefinition: each file with its bytes in base64 and its tar type ('0').
  nlohmann::json model = nlohmann::json::array();
  for (const auto& entry : std::filesystem::directory_iterator(Example())) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    model.push_back({{"path", entry.path().filename().string()},
                     {"type", 48},
                     {"content", Base64Encode(bytes)},
                     {"mode", 0644},
                     {"mtime", "1700000000"}});
  }
  auto [created, reply] =
      post("/api/v1/experiments", {{"config", YAML::Dump(config)}, {"modelDefinition", model}});
  ASSERT_EQ(created, 200) << reply.dump();
  EXPECT_EQ(reply["experiment"]["state"], "STATE_ACTIVE") << reply.dump();
  // Determined's clients decode `warnings` as LaunchWarning values: the config's go beside them.
  EXPECT_EQ(reply["warnings"], nlohmann::json::array()) << reply.dump();
  EXPECT_NE(reply["configWarnings"].dump().find("searcher.max_length"), std::string::npos)
      << reply.dump();
  const std::string path =
      "/api/v1/experiments/" + std::to_string(reply["experiment"].value("id", 0));
  const nlohmann::json tree =
      nlohmann::json::parse(http.Get(path + "/file_tree")->body, nullptr, false);
  EXPECT_EQ(tree["files"].size(), model.size()) << tree.dump();
  ASSERT_TRUE(testing::Eventually(
      [&] {
        auto got = http.Get(path);
        auto body = nlohmann::json::parse(got ? got->body : "", nullptr, false);
        return body.is_object() && body["trials"].size() == 1 &&
               body["trials"][0].value("totalBatchesProcessed", 0) >= 20;
      },
      30s))
      << Log("master.log");
  EXPECT_EQ(post(path + "/kill", nlohmann::json::object()).second.value("state", ""),
            "STATE_STOPPING_KILLED");
  ASSERT_TRUE(testing::Eventually(
      [&] {
        auto got = http.Get(path);
        return got && got->body.find("\"state\":\"STATE_CANCELED\"") != std::string::npos;
      },
      30s));
  auto deleted = http.Delete(path);
  ASSERT_TRUE(deleted);
  EXPECT_NE(deleted->body.find("DELETING"), std::string::npos) << deleted->body;
  EXPECT_TRUE(testing::Eventually(
      [&] {
        auto got = http.Get(path);
        return got && got->status == 404;
      },
      30s));
  EXPECT_EQ(http.Get("/api/v1/experiments/99999999999999999999")->status, 404)
      << "not a route: no number that large";
}

// A master killed after it stored an experiment's kill but before the kill reached the run: the
// next master sends it again, and the run does not go on to its end (400 s here; it does not
// listen for the Core API's signal, which would stop it without the kill).
TEST_F(ExperimentProcessTest, AKillTheDeadMasterStoredButNeverSentIsSentByTheNext) {
  auto agent = StartAgent("agent-k", 1);
  const int64_t id =
      Create(Config("const.yaml", [](YAML::Node& c) { c["entrypoint"] = "sleep 400"; }));
  ASSERT_TRUE(WaitForTrial(id, [](auto& t) { return t.value("task_state", "") == "RUNNING"; }));
  master_->Stop(SIGKILL);
  storage::Database db(db_, 1);
  ASSERT_TRUE(db.Run([&](pqxx::work& tx) {
                  return storage::SetExperimentState(tx, id, "STOPPING_KILLED", std::nullopt);
                }).ok());
  RestartMaster();
  EXPECT_EQ(WaitEnded(id), "CANCELED") << Log("master2.log");
  EXPECT_EQ(Describe(id)["trials"][0].value("state", ""), "CANCELED");
}

TEST_F(ExperimentProcessTest, MasterKilledAgainAndAgainMidSearchEndsWithTheSameTrials) {
  auto agent = StartAgent("agent-r", 4);
  auto hparams_of = [&](int64_t id) {
    std::set<std::string> all;
    auto described = Describe(id);
    for (const auto& trial : described["trials"]) all.insert(trial["hparams"].dump());
    EXPECT_EQ(all.size(), 16u) << described.dump();
    return all;
  };
  const std::string config =
      Config("adaptive.yaml", [](YAML::Node& c) { c["hyperparameters"]["step_seconds"] = 0.01; });
  const int64_t finished = Create(Config("const.yaml"));
  ASSERT_EQ(WaitEnded(finished), "COMPLETED");
  const int64_t interrupted = Create(config);
  ASSERT_TRUE(
      WaitForTrial(interrupted, [](auto& t) { return t.value("steps_completed", 0) >= 16; }));
  // Killed (-9) again and again at moments nobody chose: whatever it was doing (a trial closing,
  // the search deciding, a run starting), the next master goes on from what was committed.
  const unsigned seed = std::random_device{}();
  std::mt19937 moments(seed);
  RestartMaster();
  EXPECT_TRUE(WaitForLog("master2.log", "experiment " + std::to_string(interrupted) + " resumed"))
      << Log("master2.log");
  for (int kill = 0; kill < 5; ++kill) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300 + moments() % 1200));
    RestartMaster();
  }
  EXPECT_EQ(WaitEnded(interrupted), "COMPLETED")
      << "kill moments' seed " << seed << "\n"
      << StuckTrials(interrupted) << Det("task list") << "\n== master2.log\n"
      << Log("master2.log") << "\n== agent-r.log\n"
      << Log("agent-r.log");
  auto before = Describe(finished);  // finished before the restart: still there, as it ended
  EXPECT_EQ(before["experiment"].value("state", ""), "COMPLETED") << before.dump();
  EXPECT_EQ(before["trials"][0].value("steps_completed", 0), 200) << before.dump();
  const int64_t uninterrupted = Create(config);
  EXPECT_EQ(WaitEnded(uninterrupted), "COMPLETED");
  EXPECT_EQ(hparams_of(interrupted).size(), 16u);
  EXPECT_EQ(hparams_of(interrupted), hparams_of(uninterrupted));
}

// det experiment continue: a finished single-searcher experiment trains the same trial on to a
// longer length, from its checkpoint, with no step of its metrics missing; a running one, or one
// whose search is over, is refused with the reason.
TEST_F(ExperimentProcessTest, ContinueTrainsTheSameTrialLongerFromItsCheckpoint) {
  auto agent = StartAgent("agent-c", 1);
  const int64_t id = Create(Config("const.yaml", [](YAML::Node& c) {
    c["searcher"]["max_length"]["batches"] = 40;
    c["hyperparameters"]["step_seconds"] = 0.01;
  }));
  ASSERT_GT(id, 0);
  const std::string refused = Det("experiment continue " + std::to_string(id));
  EXPECT_NE(refused.find("only a COMPLETED, CANCELED or ERROR one"), std::string::npos) << refused;
  ASSERT_EQ(WaitEnded(id), "COMPLETED") << Log("master.log");
  const nlohmann::json before = Describe(id);
  const int64_t trial = before["trials"][0].value("id", int64_t{0});

  // Its runs go on as its owner's account: only the owner or an admin may continue it.
  Shell("printf 'bob-password\\n' | " +
        DetCommand("DET_USER=admin DET_PASS=" + std::string(testing::kAdminPassword) +
                       " DET_AUTH_FILE=" + (dir_ / "auth-admin.json").string(),
                   "user create bob"));
  const std::string by_bob =
      DetAs("bob", "bob-password", "experiment continue " + std::to_string(id));
  EXPECT_NE(by_bob.find("only its owner or an admin may continue it"), std::string::npos) << by_bob;
  const std::string continued =
      Det("experiment continue " + std::to_string(id) + " --config searcher.max_length.batches=80");
  EXPECT_NE(continued.find("Continued experiment " + std::to_string(id)), std::string::npos)
      << continued;
  ASSERT_EQ(WaitEnded(id), "COMPLETED") << Log("master.log");
  const nlohmann::json after = Describe(id);
  ASSERT_EQ(after["trials"].size(), 1u) << after.dump();
  EXPECT_EQ(after["trials"][0].value("id", int64_t{0}), trial) << "the same trial";
  EXPECT_EQ(after["trials"][0].value("steps_completed", 0), 80) << after.dump();
  EXPECT_EQ(after["trials"][0].value("restarts", -1), 0);
  std::vector<int64_t> every_fifth;
  for (int64_t step = 5; step <= 80; step += 5) every_fifth.push_back(step);
  EXPECT_EQ(MetricSteps(trial, "training"), every_fifth) << "no gap, nothing trained twice";
  const std::string logs = Det("trial logs " + std::to_string(trial));
  EXPECT_NE(logs.find("starting at step 40 of 80"), std::string::npos)
      << "the second run resumed from the checkpoint at 40: " << logs;
  // What checkpoint_storage kept once its collection ran: the trial's latest and its best (one
  // checkpoint or two), with their bytes.
  int kept = 0;
  EXPECT_TRUE(testing::Eventually(
      [&] {
        kept = Describe(id)["experiment"].value("checkpoint_count", 0);
        return kept == 1 || kept == 2;
      },
      30s))
      << kept;
  EXPECT_GT(Describe(id)["experiment"].value("checkpoint_bytes", int64_t{0}), 0);
  const std::string described = Det("experiment describe " + std::to_string(id));
  EXPECT_NE(described.find("checkpoints: " + std::to_string(kept) + " kept"), std::string::npos)
      << described;
  EXPECT_NE(described.find("each trial's best 1 and latest 1"), std::string::npos) << described;

  const int64_t search = Create(Config("adaptive.yaml", [](YAML::Node& c) {
    c["searcher"]["max_trials"] = 2;
    c["hyperparameters"]["step_seconds"] = 0.001;
  }));
  ASSERT_EQ(WaitEnded(search), "COMPLETED");
  const std::string over = Det("experiment continue " + std::to_string(search));
  EXPECT_NE(over.find("experiment has been completed, cannot continue this experiment"),
            std::string::npos)
      << over;
}

}  // namespace
}  // namespace det

// Coming from Determined: Determined 0.38.1's own Python library and its five Core API tutorials,
// unmodified, on a cluster of real processes (det-master with master.yaml's checkpoint_storage as
// the cluster default, det-agent on the process runtime, PostgreSQL, the det CLI and REST).
//
// The library and the tutorials are read in place from ../shared/conformance/determined-0.38.1
// (DET_CONFORMANCE_DIR overrides); without them, or without the Python packages the library
// imports (../shared/conformance/README.md lists them), the tests skip saying what is missing.
#include "tests/testing/determined_library_fixture.h"

namespace det {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using testing::DeterminedLibraryTest;
using testing::Shell;

TEST_F(DeterminedLibraryTest, Stage0RunsItsScript) {
  StartAgents(1, 8);
  const int64_t id = Submit("0_start");
  ASSERT_EQ(WaitEnded(id), "COMPLETED") << Logs(id);
}

TEST_F(DeterminedLibraryTest, Stage1ReportsEveryMetricThroughTheLibrary) {
  StartAgents(1, 8);
  const int64_t id = Submit("1_metrics");
  ASSERT_EQ(WaitEnded(id), "COMPLETED") << Logs(id);
  const nlohmann::json trial = Describe(id)["trials"][0];
  const int64_t trial_id = trial.value("id", int64_t{0});
  EXPECT_EQ(Steps(trial_id, "training"), Every(10, 100));
  EXPECT_EQ(Steps(trial_id, "validation"), std::vector<int64_t>{100});
  EXPECT_EQ(trial["best_validation"].value("x", 0), 100) << trial.dump();
  EXPECT_EQ(Logs(id).find("off-cluster"), std::string::npos);
}

// Stage 2 paused mid-run and activated: the second run restores the first's latest checkpoint
// through the library's restore_path (its info files name it) and ends at the same x.
TEST_F(DeterminedLibraryTest, Stage2PausedAndActivatedResumesFromItsCheckpoint) {
  StartAgents(1, 8);
  const int64_t id = Submit("2_checkpoints");
  ASSERT_TRUE(WaitForTrainingReports(id, 3)) << Logs(id);
  Det("experiment pause " + std::to_string(id));
  ASSERT_TRUE(WaitForTrial(id, [](auto& t) { return t.value("task_state", "") != "RUNNING"; }));
  const nlohmann::json paused = Describe(id)["trials"][0];
  ASSERT_LT(Steps(paused.value("id", int64_t{0}), "training").size(), 10u)
      << "paused too late to resume";
  Det("experiment activate " + std::to_string(id));
  ASSERT_EQ(WaitEnded(id), "COMPLETED") << Logs(id);
  const nlohmann::json trial = Describe(id)["trials"][0];
  EXPECT_EQ(trial.value("run_id", 0), 2) << trial.dump();
  EXPECT_EQ(trial["best_validation"].value("x", 0), 100) << trial.dump();
  // Restored, run 2 went on from the checkpoint's batch: the two runs logged about 100 batches
  // between them (a run started afresh would log 100 of its own after run 1's 30 or more).
  const std::string logs = Logs(id);
  const size_t batches = Occurrences(logs, "x is now ");
  EXPECT_GE(batches, 100u);
  EXPECT_LT(batches, 115u) << "run 2 did not resume from run 1's checkpoint: " << logs;
  // Run 1 listened for the preemption signal (the library's long poll): told to stop, it
  // acknowledged, returned and exited 0 by itself, without a SIGTERM.
  const std::string run1 = "trial-" + std::to_string(trial.value("id", 0)) + "-1";
  const nlohmann::json tasks = nlohmann::json::parse(Det("--json task list"), nullptr, false);
  bool found = false;
  for (const auto& task : tasks) {
    if (task.value("id", "") != run1) continue;
    found = true;
    EXPECT_EQ(task.value("exit_code", -1), 0) << task.dump();
  }
  EXPECT_TRUE(found) << run1 << " in " << tasks.dump();
  const nlohmann::json checkpoints =
      nlohmann::json::parse(Det("--json experiment list-checkpoints " + std::to_string(id)));
  ASSERT_TRUE(checkpoints.is_array() && !checkpoints.empty());
  EXPECT_TRUE(fs::exists(dir_ / "checkpoints" / "determined-checkpoint" /
                         checkpoints.back().value("uuid", "")))
      << checkpoints.dump();
}

// Stage 3: adaptive ASHA on time_metric batches up to max_time 100; trials the search lets go
// learn it through the preemption signal.
TEST_F(DeterminedLibraryTest, Stage3AdaptiveAshaSearchCompletes) {
  StartAgents(1, 8);
  const int64_t id = Submit("3_hpsearch");
  ASSERT_EQ(WaitEnded(id), "COMPLETED") << Logs(id);
  const nlohmann::json trials = Describe(id)["trials"];
  ASSERT_EQ(trials.size(), 10u) << trials.dump();
  int reached_the_top = 0;
  for (const auto& trial : trials) {
    EXPECT_EQ(trial.value("state", ""), "COMPLETED") << trial.dump();
    if (trial.value("steps_completed", 0) >= 100) ++reached_the_top;
  }
  EXPECT_GE(reached_the_top, 1);
  EXPECT_LT(reached_the_top, 10) << "ASHA stopped none early";
}

// Stage 4, its own launcher and 8 workers on one agent of 8 slots.
TEST_F(DeterminedLibraryTest, Stage4DistributedOnOneAgent) {
  StartAgents(1, 8);
  const int64_t id = Submit("4_distributed");
  ExpectStage4Completed(id);
  EXPECT_NE(Logs(id).find("[rank=7]"), std::string::npos);
}

// Stage 4 over two agents of 4 slots: two containers meet at the rendezvous before the library
// starts, and learn each other's addresses from rendezvous.json.
TEST_F(DeterminedLibraryTest, Stage4DistributedOverTwoAgents) {
  StartAgents(2, 4);
  ExpectStage4Completed(Submit("4_distributed"));
}

// kill -9 of the master mid-run: the library retries its calls until a new master answers, and
// every metric it reported is stored once.
TEST_F(DeterminedLibraryTest, MasterKilledMidRunLosesNoMetric) {
  StartAgents(1, 8);
  const int64_t id = Submit("1_metrics");
  ASSERT_TRUE(WaitForTrainingReports(id, 3)) << Logs(id);
  RestartMaster();
  ASSERT_EQ(WaitEnded(id), "COMPLETED") << Logs(id);
  const int64_t trial_id = Describe(id)["trials"][0].value("id", int64_t{0});
  EXPECT_EQ(Steps(trial_id, "training"), Every(10, 100));
  EXPECT_EQ(Steps(trial_id, "validation"), std::vector<int64_t>{100});
}

// The contract itself: the files the library reads, private to each run.
TEST_F(DeterminedLibraryTest, EachRunSeesItsOwnInfoFiles) {
  StartAgents(1, 8);
  fs::create_directories(dir_ / "probe");
  std::ofstream(dir_ / "probe" / "probe.py") << R"PY(
import json, os, time
import determined as det
info = det.get_cluster_info()
assert info is not None, "no cluster info"
print("PROBE", json.dumps({"trial": info.trial.trial_id, "task_type": info.task_type,
      "slots": len(info.slot_ids), "addrs": info.container_addrs,
      "storage": info.trial._config["checkpoint_storage"]["type"],
      "slot_env": json.loads(os.environ["DET_SLOT_IDS"]), "resources_id": os.environ["DET_RESOURCES_ID"],
      "user": os.environ["DET_USER"],
      "files": sorted(os.listdir("/run/determined/info"))}), flush=True)
with det.core.init() as core_context:
    core_context.train.report_metrics("inference", 7, {"latency_ms": 3.5})
    with core_context.checkpoint.store_path({"steps_completed": 7, "note": "probe"}) as (path, uuid):
        (path / "weights").write_text("w")
    print("METADATA", json.dumps(core_context.checkpoint.get_metadata(uuid)), flush=True)
time.sleep(3)
)PY";
  std::ofstream(dir_ / "probe" / "probe.yaml")
      << "name: probe\nentrypoint: python3 probe.py\n"
         "searcher: {name: random, metric: x, max_trials: 2}\nmax_restarts: 0\n";
  const int64_t id = Create((dir_ / "probe" / "probe.yaml").string(), (dir_ / "probe").string());
  ASSERT_EQ(WaitEnded(id), "COMPLETED") << Logs(id);
  const std::string logs = Logs(id);
  std::set<int64_t> trials_seen;
  for (size_t at = logs.find("PROBE "); at != std::string::npos; at = logs.find("PROBE ", at + 1)) {
    const auto seen = nlohmann::json::parse(logs.substr(at + 6, logs.find('\n', at) - at - 6));
    EXPECT_EQ(seen.value("task_type", ""), "TRIAL");
    EXPECT_EQ(seen.value("slots", 0), 1);
    EXPECT_EQ(seen.value("storage", ""), "directory");
    EXPECT_EQ(seen["slot_env"].size(), 1u) << "DET_SLOT_IDS is a JSON list";
    EXPECT_TRUE(seen.value("resources_id", "").starts_with("trial-")) << seen.dump();
    EXPECT_EQ(seen.value("user", ""), "admin");
    EXPECT_EQ(seen["files"],
              nlohmann::json({"cluster.json", "rendezvous.json", "resources.json", "trial.json"}));
    trials_seen.insert(seen.value("trial", int64_t{0}));
  }
  EXPECT_EQ(trials_seen.size(), 2u)
      << "each of the two concurrent runs saw its own trial: " << logs;
  for (int64_t trial_id : trials_seen) {
    EXPECT_EQ(Steps(trial_id, "inference"), std::vector<int64_t>{7}) << "a custom metric group";
  }
  // Each run read its checkpoint's metadata back through Determined's GetCheckpoint.
  const size_t metadata = logs.find("METADATA {");
  ASSERT_NE(metadata, std::string::npos) << logs;
  const std::string line = logs.substr(metadata, logs.find('\n', metadata) - metadata);
  EXPECT_NE(line.find(R"("note": "probe")"), std::string::npos) << line;
  EXPECT_NE(line.find(R"("steps_completed": 7)"), std::string::npos) << line;
  EXPECT_FALSE(fs::exists("/run/determined/info/cluster.json"))
      << "the runs' files never reach the host's /run";
}

// The rest of what the library calls on a trial's behalf, each checked by the library itself:
// the runner's state, run metadata, its trial and the experiment's best validation, the
// deprecated searcher operations of a config with max_length, a checkpoint deleted (PATCH), and
// det inside the run from DET_MASTER (the REST URL).
TEST_F(DeterminedLibraryTest, TheLibrarysOtherCallsAnswerAsDeterminedDid) {
  StartAgents(1, 8);
  fs::create_directories(dir_ / "calls");
  std::ofstream(dir_ / "calls" / "calls.py") << R"PY(
import os, subprocess, time
import determined as det
with det.core.init() as core:
    train = core.train
    train.set_status("warming up")
    core.profiler.on(sampling_interval=1, samples_per_report=1)
    assert train.get_metadata() == {}, train.get_metadata()
    train.set_metadata({"stage": "one", "n": 1})
    assert train.get_metadata() == {"stage": "one", "n": 1}, train.get_metadata()
    assert train.get_experiment_best_validation() is None
    assert train._get_last_validation() is None
    for op in core.searcher.operations():
        for step in range(1, op.length + 1):
            train.report_training_metrics(step, {"loss": 1.0 / step})
            op.report_progress(step)
        train.report_validation_metrics(op.length, {"loss": 0.25})
        op.report_completed(0.25)
    # The library ships metrics from a thread of its own: wait for them to land.
    for _ in range(100):
        if train.get_experiment_best_validation() is not None:
            break
        time.sleep(0.1)
    assert train.get_experiment_best_validation() == 0.25, train.get_experiment_best_validation()
    assert train._get_last_validation() == 3, train._get_last_validation()
    with core.checkpoint.store_path({"steps_completed": 3}) as (path, uuid):
        (path / "weights").write_text("w")
    core.checkpoint.delete(uuid)
    print("DELETED", uuid, flush=True)
    train.set_status("done")
    core.profiler.off()
    info = subprocess.run([os.environ["CLI_PATH"], "--plaintext", "master", "info"],
                          capture_output=True, text=True)
    print("DET_MASTER", os.environ["DET_MASTER"], info.returncode, info.stdout, info.stderr, flush=True)
print("LIBRARY CALLS OK", flush=True)
)PY";
  std::ofstream(dir_ / "calls" / "calls.yaml")
      << "name: calls\nentrypoint: python3 calls.py\n"
         "searcher: {name: single, metric: loss, max_length: {batches: 3}}\nmax_restarts: 0\n"
         "environment:\n  environment_variables: [CLI_PATH="
      << testing::BuildDir() << "/cli/det]\n";
  const int64_t id = Create((dir_ / "calls" / "calls.yaml").string(), (dir_ / "calls").string());
  ASSERT_EQ(WaitEnded(id), "COMPLETED") << Logs(id);
  const std::string logs = Logs(id);
  EXPECT_NE(logs.find("LIBRARY CALLS OK"), std::string::npos) << logs;
  EXPECT_NE(logs.find("DET_MASTER http://"), std::string::npos) << logs;
  EXPECT_NE(logs.find("cluster id:"), std::string::npos) << "det inside the run: " << logs;

  const nlohmann::json trial = Describe(id)["trials"][0];
  const int64_t trial_id = trial.value("id", int64_t{0});
  testing::RestClient rest(std::stoi(rest_port_));
  const std::string token = rest.Login("admin", testing::kAdminPassword);
  auto got = rest.Send("GET", "/api/v1/trials/" + std::to_string(trial_id), token);
  EXPECT_EQ(got.body["trial"].value("runnerState", ""), "done") << got.text;
  EXPECT_EQ(got.body["trial"]["latestValidation"].value("totalBatches", 0), 3) << got.text;
  auto metadata = rest.Send("GET", "/api/v1/runs/" + std::to_string(trial_id) + "/metadata", token);
  EXPECT_EQ(metadata.body["metadata"], nlohmann::json({{"stage", "one"}, {"n", 1}}))
      << metadata.text;
  auto best = rest.Send(
      "GET",
      "/api/v1/experiments/" + std::to_string(id) + "/searcher/best_searcher_validation_metric",
      token);
  EXPECT_EQ(best.body.value("metric", 0.0), 0.25) << best.text;
  // The deleted checkpoint is listed as such, and its files are gone.
  const size_t deleted = logs.find("DELETED ");
  ASSERT_NE(deleted, std::string::npos) << logs;
  const std::string uuid = logs.substr(deleted + 8, 36);
  const std::string listed = Det("experiment list-checkpoints " + std::to_string(id));
  EXPECT_NE(listed.find("DELETED"), std::string::npos) << listed;
  EXPECT_FALSE(fs::exists(dir_ / "checkpoints" / "determined-checkpoint" / uuid));
  // The profiler's system metrics, a series by report time per group.
  const nlohmann::json cpu = Metrics(trial_id, "cpu").value("metrics", nlohmann::json::array());
  ASSERT_FALSE(cpu.empty()) << logs;
  EXPECT_GT(cpu[0].value("step", int64_t{0}), int64_t{1'700'000'000'000}) << cpu.dump();
}

// A Determined config is checked without creating anything: warnings name what is ignored.
TEST_F(DeterminedLibraryTest, DryRunChecksATutorialConfigWithTheClusterDefaults) {
  const std::string ok =
      Det("experiment create --dry-run " + (dir_ / "core_api" / "3_hpsearch.yaml").string());
  EXPECT_NE(ok.find("valid; nothing was created"), std::string::npos) << ok;
  std::ofstream(dir_ / "bad.yaml") << "entrypoint: x\nsearcher: {name: single, metric: x}\n"
                                      "workspace: w\nproject: p\nspeling: 1\n";
  const std::string bad =
      Shell(DetCommand("DET_USER=admin DET_PASS='" + std::string(testing::kAdminPassword) + "'",
                       "experiment create --dry-run " + (dir_ / "bad.yaml").string()) +
            "; echo rc=$?");
  EXPECT_NE(bad.find("speling: unknown field"), std::string::npos) << bad;
  EXPECT_NE(bad.find("rc=2"), std::string::npos) << bad;
  // An entrypoint whose script is not in the folder sent with it: warned before any trial fails.
  const std::string single = "searcher: {name: single, metric: x}\n";
  std::ofstream(dir_ / "right.yaml") << "entrypoint: python3 1_metrics.py\n" << single;
  std::ofstream(dir_ / "typo.yaml") << "entrypoint: python3 1_metric.py\n" << single;
  const std::string right = Det("experiment create --dry-run " + (dir_ / "right.yaml").string() +
                                " " + (dir_ / "core_api").string());
  EXPECT_EQ(right.find("not in the model definition"), std::string::npos) << right;
  const std::string typo = Det("experiment create --dry-run " + (dir_ / "typo.yaml").string() +
                               " " + (dir_ / "core_api").string());
  EXPECT_NE(typo.find("1_metric.py is not in the model definition"), std::string::npos) << typo;
  EXPECT_NE(Det("--json experiment list").find("[]"), std::string::npos);
}

}  // namespace
}  // namespace det

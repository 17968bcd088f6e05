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
#include <set>

#include "tests/testing/cluster_fixture.h"
#include "tests/testing/determined_library_fixture.h"
#include "tests/testing/rest_client.h"
#include "tests/testing/test_util.h"

namespace det {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

using testing::ConformanceDir;

// A file's bytes ("" when it cannot be read).
std::string FileText(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
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

// Determined's CLI with `args` against the master on `rest_port`, as admin through
// DET_USER/DET_PASS unless `as_admin` is false (then the token store in `dir`/home speaks, as
// after `det user login`); `input` on its standard input, without a terminal (setsid: getpass
// reads it). Output and errors together, then "rc=N".
std::string RunDetermined(const fs::path& dir, const std::string& rest_port,
                          const std::string& args, const std::string& input, bool as_admin) {
  fs::create_directories(dir / "home");
  const fs::path in = dir / "determined-input";
  std::ofstream(in) << input;
  const std::string credentials =
      as_admin ? " DET_USER=admin DET_PASS=" + std::string(testing::kAdminPassword) : "";
  return testing::Shell("{ env -u DET_USER -u DET_PASS HOME=" + (dir / "home").string() +
                        " PYTHONPATH=" + (ConformanceDir() / "harness").string() +
                        " DET_MASTER=http://127.0.0.1:" + rest_port + credentials +
                        " setsid timeout 300 /usr/bin/python3 -m determined.cli " + args + " < " +
                        in.string() + "; echo rc=$?; } 2>&1");
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class DeterminedCliTest : public testing::ClusterProcessTest {
 protected:
  void SetUp() override {
    if (std::string missing = MissingForDeterminedCli(); !missing.empty()) {
      GTEST_SKIP() << "needs " << missing;
    }
    ClusterProcessTest::SetUp();
    rest_ = std::make_unique<testing::RestClient>(std::stoi(rest_port_));
    admin_ = rest_->Login("admin", testing::kAdminPassword);
    ASSERT_FALSE(admin_.empty());
  }

  std::string Determined(const std::string& args, const std::string& input = "",
                         bool as_admin = true) {
    return RunDetermined(dir_, rest_port_, args, input, as_admin);
  }
  testing::RestAnswer Send(const std::string& method, const std::string& path,
                           const std::string& body = "") {
    return rest_->Send(method, path, admin_, body);
  }

  std::unique_ptr<testing::RestClient> rest_;
  std::string admin_;
};

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

  // `det master logs`: the master's own lines, as Determined's MasterLogs streams them.
  const std::string logs = Determined("master logs --tail 1000");
  EXPECT_TRUE(Has(logs, "[INFO]: det-master")) << logs;

  // `det token`: an access token for bob, listed, described, renamed, used, revoked.
  const std::string made = Determined("token create bob -e 2 -d ci");
  std::smatch token;
  ASSERT_TRUE(std::regex_search(made, token, std::regex("TokenID: (\\d+)\nAccess-Token: (\\S+)")))
      << made;
  const std::string id = token[1].str(), secret = token[2].str();
  const std::string listed = Determined("token list bob");
  EXPECT_TRUE(Has(listed, "| ACCESS_TOKEN")) << listed;
  EXPECT_TRUE(Has(listed, " ci ")) << listed;
  const std::string edited = Determined("token edit " + id + " -d nightly");
  EXPECT_TRUE(Has(edited, "Successfully updated token")) << edited;
  const std::string described = Determined("token describe " + id + " --json");
  EXPECT_TRUE(Has(described, "\"description\": \"nightly\"")) << described;
  const std::string token_login = Determined("token login " + secret, "", false);
  EXPECT_TRUE(Has(token_login, "Authenticated as bob.")) << token_login;
  EXPECT_TRUE(Has(Determined("user whoami", "", false), "'bob'"));
  const std::string revoked = Determined("token revoke " + id);
  EXPECT_TRUE(Has(revoked, "Successfully revoked token")) << revoked;
  EXPECT_EQ(rest_->Send("GET", "/api/v1/me", secret).status, 401);
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
  const std::string job = Send("GET", "/api/v1/job-queues").body["jobs"][0].value("jobId", "");
  const std::string updated = Determined("job update " + job + " --priority 9");
  EXPECT_TRUE(Has(updated, "rc=0")) << updated;
  EXPECT_TRUE(testing::Eventually(  // the polled list is refreshed every second
      [&] { return Send("GET", "/api/v1/job-queues").body["jobs"][0]["priority"] == 9; }, 5s))
      << updated;
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

// Experiments of Determined's Core API tutorial, made and followed with Determined's CLI; their
// trials run Determined's library on the cluster (root and the library's packages needed).
class DeterminedCliExperimentTest : public testing::DeterminedLibraryTest {
 protected:
  std::string Determined(const std::string& args) {
    return RunDetermined(dir_, rest_port_, args, "", true);
  }
  nlohmann::json Get(const std::string& path) {
    testing::RestClient rest(std::stoi(rest_port_));
    return rest.Send("GET", path, rest.Login("admin", testing::kAdminPassword)).body;
  }
  std::string StateOf(int64_t id) {
    return Get("/api/v1/experiments/" + std::to_string(id))["experiment"].value("state", "");
  }
  // `det experiment create` of a tutorial stage: its id (0 when it was not created).
  // `options`: more of `det experiment create`'s, before the config ("--config K=V").
  int64_t CreateStage(const std::string& stage, const std::string& options = "") {
    const std::string out =
        Determined("experiment create " + options + " " + (dir_ / "core_api").string() + "/" +
                   stage + ".yaml " + (dir_ / "core_api").string());
    std::smatch id;
    EXPECT_TRUE(std::regex_search(out, id, std::regex("Created experiment ([0-9]+)"))) << out;
    return id.empty() ? 0 : std::stoll(id[1].str());
  }
  // The experiment's first trial's id, once it has one (0 after 30 s).
  int64_t FirstTrial(int64_t id) {
    int64_t trial = 0;
    testing::Eventually(
        [&] {
          const nlohmann::json trials =
              Get("/api/v1/experiments/" + std::to_string(id) + "/trials")["trials"];
          if (trials.is_array() && !trials.empty()) trial = trials[0].value("id", int64_t{0});
          return trial != 0;
        },
        30s);
    return trial;
  }
};

TEST_F(DeterminedCliExperimentTest, Stage1IsCreatedFollowedWaitedForAndDescribed) {
  StartAgents(1, 8);
  const int64_t id = CreateStage("1_metrics");
  ASSERT_GT(id, 0);
  const int64_t trial = FirstTrial(id);
  ASSERT_GT(trial, 0);
  // `det trial logs -f` follows the run to the trial's end.
  const std::string followed = Determined("trial logs -f " + std::to_string(trial));
  EXPECT_TRUE(Has(followed, "x is now 100")) << followed;
  EXPECT_TRUE(Has(followed, "rc=0")) << followed;
  const std::string waited = Determined("experiment wait " + std::to_string(id));
  EXPECT_TRUE(Has(waited, "rc=0")) << waited;
  EXPECT_EQ(StateOf(id), "STATE_COMPLETED");

  const std::string listed = Determined("experiment list");
  EXPECT_TRUE(Has(listed, "core-api-stage-1")) << listed;
  EXPECT_TRUE(Has(listed, "COMPLETED")) << listed;
  const std::string described = Determined("experiment describe " + std::to_string(id));
  EXPECT_TRUE(Has(described, "core-api-stage-1")) << described;
  EXPECT_TRUE(Has(described, "rc=0")) << described;
  const std::string trial_described = Determined("trial describe " + std::to_string(trial));
  EXPECT_TRUE(Has(trial_described, "COMPLETED")) << trial_described;
  EXPECT_TRUE(Has(trial_described, "rc=0")) << trial_described;
  const std::string logs = Determined("trial logs " + std::to_string(trial));
  EXPECT_TRUE(Has(logs, "info-level message")) << logs;
  EXPECT_EQ(Occurrences(logs, "x is now "), 100u) << logs;
}

TEST_F(DeterminedCliExperimentTest, Stage2PausedActivatedAndItsCheckpointsListed) {
  StartAgents(1, 8);
  const int64_t id = CreateStage("2_checkpoints");
  ASSERT_GT(id, 0);
  ASSERT_TRUE(WaitForTrainingReports(id, 3)) << Logs(id);
  EXPECT_TRUE(Has(Determined("experiment pause " + std::to_string(id)), "rc=0"));
  EXPECT_TRUE(testing::Eventually([&] { return StateOf(id) == "STATE_PAUSED"; }, 30s));
  EXPECT_TRUE(Has(Determined("experiment activate " + std::to_string(id)), "rc=0"));
  EXPECT_TRUE(Has(Determined("experiment wait " + std::to_string(id)), "rc=0"));
  EXPECT_EQ(StateOf(id), "STATE_COMPLETED");
  const nlohmann::json checkpoints =
      Get("/api/v1/experiments/" + std::to_string(id) + "/checkpoints")["checkpoints"];
  ASSERT_FALSE(checkpoints.empty());
  const std::string listed = Determined("experiment list-checkpoints " + std::to_string(id));
  for (const auto& checkpoint : checkpoints) {
    EXPECT_TRUE(Has(listed, checkpoint.value("uuid", "?"))) << listed;
  }
  // `det checkpoint describe`: Determined's GetCheckpoint for a user.
  const std::string uuid = checkpoints.back().value("uuid", "");
  const std::string described = Determined("checkpoint describe " + uuid);
  EXPECT_TRUE(Has(described, uuid)) << described;
  EXPECT_TRUE(Has(described, "steps_completed")) << described;
  EXPECT_TRUE(Has(described, "rc=0")) << described;
  // `det checkpoint download --mode master`: GET /checkpoints/{uuid}, the files streamed through
  // the master as a gzipped tar; byte for byte what the trial wrote, and Determined's
  // metadata.json beside them.
  const fs::path out = dir_ / "downloaded";
  const std::string downloaded =
      Determined("checkpoint download --mode master -o " + out.string() + " " + uuid);
  EXPECT_TRUE(Has(downloaded, "rc=0")) << downloaded;
  const fs::path written = dir_ / "checkpoints" / "determined-checkpoint" / uuid;
  size_t compared = 0;
  for (const auto& file : fs::recursive_directory_iterator(written)) {
    if (!file.is_regular_file()) continue;
    const fs::path relative = fs::relative(file.path(), written);
    EXPECT_EQ(FileText(out / relative), FileText(file.path())) << relative;
    ++compared;
  }
  EXPECT_GT(compared, 0u) << "the trial wrote files";
  EXPECT_TRUE(fs::exists(out / "metadata.json"));

  // A warm start from that checkpoint (searcher.source_checkpoint_uuid): the tutorial's new trial
  // loads the checkpoint's "weight" x and counts its 100 batches afresh, so it ends at x + 100,
  // where a cold start ends at 100.
  const std::string state = FileText(out / "state");  // "x,steps_completed,trial_id"
  ASSERT_NE(state.find(','), std::string::npos) << state;
  const int64_t x = std::stoll(state.substr(0, state.find(',')));
  const int64_t warm =
      CreateStage("2_checkpoints", "--config searcher.source_checkpoint_uuid=" + uuid);
  ASSERT_GT(warm, 0);
  EXPECT_TRUE(Has(Determined("experiment wait " + std::to_string(warm)), "rc=0"));
  const std::string logs = Determined("trial logs " + std::to_string(FirstTrial(warm)));
  EXPECT_TRUE(Has(logs, "x is now " + std::to_string(x + 1) + "\n")) << logs;
  EXPECT_TRUE(Has(logs, "x is now " + std::to_string(x + 100) + "\n")) << logs;
}

// `det experiment continue` (Determined's ContinueExperiment) recovers a killed tutorial stage 2:
// the same trial resumes from its latest checkpoint (x counts on from there, never from 1 again)
// and completes, every 10th batch's metrics reported.
TEST_F(DeterminedCliExperimentTest, Stage2KilledIsContinuedFromItsCheckpointToTheEnd) {
  StartAgents(1, 8);
  const int64_t id = CreateStage("2_checkpoints");
  ASSERT_GT(id, 0);
  ASSERT_TRUE(WaitForTrainingReports(id, 3)) << Logs(id);
  EXPECT_TRUE(Has(Determined("experiment kill " + std::to_string(id)), "rc=0"));
  EXPECT_TRUE(testing::Eventually([&] { return StateOf(id) == "STATE_CANCELED"; }, 30s));
  const std::string continued = Determined("experiment continue " + std::to_string(id));
  EXPECT_TRUE(Has(continued, "Continued experiment " + std::to_string(id))) << continued;
  EXPECT_TRUE(Has(Determined("experiment wait " + std::to_string(id)), "rc=0"));
  EXPECT_EQ(StateOf(id), "STATE_COMPLETED");
  const int64_t trial = FirstTrial(id);
  const std::vector<int64_t> steps = Steps(trial, "training");
  const std::set<int64_t> reported(steps.begin(), steps.end());
  for (int64_t step = 10; step <= 100; step += 10) EXPECT_TRUE(reported.count(step)) << step;
  const std::string logs = Determined("trial logs " + std::to_string(trial));
  EXPECT_EQ(Occurrences(logs, "x is now 1\n"), 1u) << "the second run resumed: " << logs;
  EXPECT_TRUE(Has(logs, "x is now 100\n")) << logs;
}

// The model registry through Determined's CLI and SDK: `det model create`, `register-version`
// (by name, and with --json by the model's id), `list`, `describe`, `list-versions`; the SDK's
// get_model, get_versions, set_description, set_labels, add_metadata, register_version, archive and
// a version's checkpoint downloaded through the master; `det checkpoint delete` of a registered
// checkpoint refused and of another done. Then the experiment is deleted: the
// registered checkpoint's files stay where the trial wrote them and still download byte for byte,
// its other checkpoints' files are removed, and the model still describes its versions.
TEST_F(DeterminedCliExperimentTest, ModelRegistryKeepsACheckpointPastItsExperiment) {
  StartAgents(1, 8);
  // master.yaml's storage, keeping each trial's two latest checkpoints (Determined keeps one).
  const std::string storage_config =
      "--config checkpoint_storage.type=shared_fs --config checkpoint_storage.host_path=" +
      (dir_ / "checkpoints").string() +
      " --config checkpoint_storage.storage_path=determined-checkpoint"
      " --config checkpoint_storage.save_trial_latest=2";
  const int64_t id = CreateStage("2_checkpoints", storage_config);
  ASSERT_GT(id, 0);
  EXPECT_TRUE(Has(Determined("experiment wait " + std::to_string(id)), "rc=0"));
  const nlohmann::json checkpoints =
      Get("/api/v1/experiments/" + std::to_string(id) + "/checkpoints")["checkpoints"];
  // What GC left of them: the two latest (and the best, when it is another).
  std::vector<nlohmann::json> kept;
  for (const auto& checkpoint : checkpoints) {
    if (checkpoint.value("state", "") == "STATE_COMPLETED") kept.push_back(checkpoint);
  }
  ASSERT_GE(kept.size(), 2u) << checkpoints.dump();
  const std::string uuid = kept.back().value("uuid", "");

  const std::string created = Determined("model create mnist-cnn --description first");
  EXPECT_TRUE(Has(created, "mnist-cnn")) << created;
  EXPECT_TRUE(Has(created, "rc=0")) << created;
  EXPECT_TRUE(Has(Determined("model create mnist-cnn"), "already exists"));
  const std::string registered = Determined("model register-version mnist-cnn " + uuid);
  EXPECT_TRUE(Has(registered, uuid)) << registered;
  EXPECT_TRUE(Has(registered, "rc=0")) << registered;
  const std::string by_id = Determined("model register-version --json mnist-cnn " + uuid);
  EXPECT_TRUE(Has(by_id, "\"version\": 2")) << by_id;
  const std::string listed = Determined("model list");
  EXPECT_TRUE(Has(listed, "mnist-cnn")) << listed;
  const std::string versions = Determined("model list-versions mnist-cnn");
  EXPECT_TRUE(Has(versions, uuid)) << versions;
  EXPECT_TRUE(Has(versions, "rc=0")) << versions;
  const nlohmann::json model = Get("/api/v1/models/mnist-cnn")["model"];
  EXPECT_EQ(model.value("numVersions", 0), 2) << model.dump();
  EXPECT_EQ(model.value("description", ""), "first");

  const fs::path storage = dir_ / "checkpoints" / "determined-checkpoint";
  // `det trial download --latest` and `det experiment download --top-n 1`: Determined's choice
  // among the trial's and the experiment's checkpoints (read from the storage directly here),
  // while two are kept (its CLI's --latest walks the list from its end and fails when the one it
  // takes is the list's first: it would here once only the latest is left).
  const fs::path from_trial = dir_ / "trial-download";
  const std::string trial_download = Determined(
      "trial download --latest -o " + from_trial.string() + " " + std::to_string(FirstTrial(id)));
  EXPECT_TRUE(Has(trial_download, "rc=0")) << trial_download;
  EXPECT_TRUE(fs::exists(from_trial / "metadata.json")) << trial_download;
  const fs::path top = dir_ / "top-download";
  const std::string top_download =
      Determined("experiment download --top-n 1 -o " + top.string() + " " + std::to_string(id));
  EXPECT_TRUE(Has(top_download, "rc=0")) << top_download;
  size_t top_folders = 0;
  for (const auto& folder : fs::directory_iterator(top)) {
    EXPECT_TRUE(fs::exists(folder.path() / "metadata.json")) << folder.path();
    EXPECT_TRUE(fs::exists(storage / folder.path().filename())) << "a kept checkpoint";
    ++top_folders;
  }
  EXPECT_EQ(top_folders, 1u) << top_download;

  // `det checkpoint delete`: a registered checkpoint is refused; another one's files go, then it
  // is DELETED.
  const std::string refused = Determined("checkpoint delete --yes " + uuid);
  EXPECT_TRUE(Has(refused, "model registry")) << refused;
  EXPECT_TRUE(fs::exists(storage / uuid));
  const std::string other = kept.front().value("uuid", "");
  EXPECT_TRUE(Has(Determined("checkpoint delete --yes " + other), "rc=0"));
  EXPECT_TRUE(testing::Eventually(
      [&] {
        return Get("/api/v1/checkpoints/" + other)["checkpoint"].value("state", "") ==
               "STATE_DELETED";
      },
      60s));
  EXPECT_FALSE(fs::exists(storage / other));
  // The experiment's totals (Determined's checkpointCount, checkpointSize) count what still has
  // files.
  int64_t kept_bytes = 0;
  for (const auto& checkpoint : kept) {
    if (checkpoint.value("uuid", "") != other) kept_bytes += checkpoint.value("sizeBytes", 0);
  }
  const nlohmann::json totals = Get("/api/v1/experiments/" + std::to_string(id))["experiment"];
  EXPECT_EQ(totals.value("checkpointCount", -1), static_cast<int>(kept.size()) - 1);
  EXPECT_EQ(totals.value("checkpointSize", ""), std::to_string(kept_bytes)) << totals.dump();
  EXPECT_GT(kept_bytes, 0);

  const fs::path script = dir_ / "model_script.py";
  std::ofstream(script) << R"(import json, os, sys
from determined.experimental import client
client.login(master=os.environ["DET_MASTER"], user="admin", password=os.environ["DET_PASS"])
model = client.get_model("mnist-cnn")
model.set_description("the best so far")
model.set_labels(["vision", "tutorial"])
model.add_metadata({"owner": "team-a"})
latest = model.get_version()
third = model.register_version(latest.checkpoint.uuid)
path = latest.checkpoint.download(path=sys.argv[1], mode=client.DownloadMode.MASTER)
model.archive()
try:
    model.register_version(latest.checkpoint.uuid)
    refused = ""
except Exception as e:
    refused = str(e)
print(json.dumps({"versions": [v.model_version for v in model.get_versions()],
                  "latest": latest.model_version, "uuid": latest.checkpoint.uuid,
                  "third": third.model_version, "downloaded": sorted(os.listdir(path)),
                  "models": [m.name for m in client.get_models()], "refused": refused,
                  "by_id": client.get_model(model.model_id).name}))
)";
  const fs::path sdk_download = dir_ / "sdk-downloaded";
  const std::string out =
      testing::Shell("cd " + dir_.string() + " && { HOME=" + (dir_ / "home").string() +
                     " PYTHONPATH=" + (ConformanceDir() / "harness").string() +
                     " DET_MASTER=http://127.0.0.1:" + rest_port_ +
                     " DET_PASS=" + testing::kAdminPassword + " timeout 300 /usr/bin/python3 " +
                     script.string() + " " + sdk_download.string() + "; } 2>&1");
  const size_t brace = out.rfind("\n{");
  const nlohmann::json got = nlohmann::json::parse(
      brace == std::string::npos ? out : out.substr(brace + 1), nullptr, false);
  ASSERT_TRUE(got.is_object()) << out;
  EXPECT_EQ(got["versions"], nlohmann::json({3, 2, 1})) << out;
  EXPECT_EQ(got["latest"], 2) << out;
  EXPECT_EQ(got["third"], 3) << out;
  EXPECT_EQ(got["uuid"], uuid) << out;
  EXPECT_EQ(got["models"], nlohmann::json({"mnist-cnn"})) << out;
  EXPECT_EQ(got["by_id"], "mnist-cnn") << out;
  EXPECT_NE(got["refused"].get<std::string>().find("archived"), std::string::npos) << out;
  EXPECT_NE(got["downloaded"].dump().find("metadata.json"), std::string::npos) << out;
  const nlohmann::json changed = Get("/api/v1/models/mnist-cnn")["model"];
  EXPECT_EQ(changed.value("description", ""), "the best so far");
  EXPECT_EQ(changed["labels"], nlohmann::json({"vision", "tutorial"}));
  EXPECT_EQ(changed["metadata"].value("owner", ""), "team-a");
  EXPECT_TRUE(changed.value("archived", false));

  // The experiment deleted: its unregistered checkpoints' files go, the registered one's stay.
  EXPECT_TRUE(Has(Determined("experiment delete --yes " + std::to_string(id)), "rc=0"));
  EXPECT_TRUE(testing::Eventually(
      [&] { return Get("/api/v1/experiments/" + std::to_string(id)).contains("error"); }, 60s));
  EXPECT_TRUE(fs::exists(storage / uuid));
  for (const auto& checkpoint : checkpoints) {
    const std::string each = checkpoint.value("uuid", "");
    if (each != uuid) {
      EXPECT_FALSE(fs::exists(storage / each)) << each;
    }
  }
  const std::string described = Determined("model describe mnist-cnn");
  EXPECT_TRUE(Has(described, uuid)) << described;
  EXPECT_TRUE(Has(described, "rc=0")) << described;
  const fs::path out_dir = dir_ / "after-deletion";
  const std::string downloaded =
      Determined("checkpoint download --mode master -o " + out_dir.string() + " " + uuid);
  EXPECT_TRUE(Has(downloaded, "rc=0")) << downloaded;
  size_t compared = 0;
  for (const auto& file : fs::recursive_directory_iterator(storage / uuid)) {
    if (!file.is_regular_file()) continue;
    const fs::path relative = fs::relative(file.path(), storage / uuid);
    EXPECT_EQ(FileText(out_dir / relative), FileText(file.path())) << relative;
    EXPECT_EQ(FileText(sdk_download / relative), FileText(file.path())) << relative;
    ++compared;
  }
  EXPECT_GT(compared, 0u);
  EXPECT_TRUE(Has(Determined("model delete mnist-cnn"), "rc=0"));
  EXPECT_TRUE(Get("/api/v1/models/mnist-cnn").contains("error"));
}

TEST_F(DeterminedCliExperimentTest, Stage3SearchIsCreatedAndKilled) {
  StartAgents(1, 8);
  const int64_t id = CreateStage("3_hpsearch");
  ASSERT_GT(id, 0);
  ASSERT_GT(FirstTrial(id), 0);
  EXPECT_EQ(
      Get("/api/v1/experiments/" + std::to_string(id))["experiment"].value("searcherType", ""),
      "adaptive_asha");
  EXPECT_TRUE(Has(Determined("experiment kill " + std::to_string(id)), "rc=0"));
  EXPECT_TRUE(testing::Eventually([&] { return StateOf(id) == "STATE_CANCELED"; }, 60s))
      << StateOf(id);
  const std::string waited = Determined("experiment wait " + std::to_string(id));
  EXPECT_TRUE(Has(waited, "rc=1")) << "a canceled experiment is no success: " << waited;
}

// Determined's Python SDK (`from determined.experimental import client`), as a user's script
// calls it: login, create_experiment, wait, list_trials, list_experiments, top_checkpoint (and its
// download), iter_metrics, kill. The script prints what it got as JSON; the test compares it with
// the REST API.
TEST_F(DeterminedCliExperimentTest, DeterminedsSdkScript) {
  StartAgents(1, 8);
  const fs::path script = dir_ / "sdk_script.py";
  std::ofstream(script) << R"(import json, os, sys
from determined.experimental import client
client.login(master=os.environ["DET_MASTER"], user="admin", password=os.environ["DET_PASS"])
folder = sys.argv[1]
exp = client.create_experiment(config=folder + "/2_checkpoints.yaml", model_dir=folder)
state = exp.wait(interval=0.5)
trials = exp.list_trials()
top = exp.top_checkpoint()
path = top.download(path=os.path.join(sys.argv[2], "downloaded"))
steps = [m.steps_completed for m in trials[0].iter_metrics("validation")]
client.get_checkpoint(top.uuid).add_metadata({"reviewed": "yes"})
fetched = client.get_checkpoint(top.uuid)
other = client.create_experiment(config=folder + "/3_hpsearch.yaml", model_dir=folder)
other.kill()
print(json.dumps({"id": exp.id, "state": state.value, "trials": [t.id for t in trials],
                  "experiments": [e.id for e in client.list_experiments()],
                  "top": top.uuid, "downloaded": sorted(os.listdir(path)),
                  "validation_steps": steps, "killed": other.id,
                  "fetched": {"trial": fetched.training.trial_id, "metadata": fetched.metadata}}))
)";
  const std::string out = testing::Shell(
      "cd " + dir_.string() + " && { HOME=" + (dir_ / "home").string() + " PYTHONPATH=" +
      (ConformanceDir() / "harness").string() + " DET_MASTER=http://127.0.0.1:" + rest_port_ +
      " DET_PASS=" + testing::kAdminPassword + " timeout 300 /usr/bin/python3 " + script.string() +
      " " + (dir_ / "core_api").string() + " " + dir_.string() + "; } 2>&1");
  const size_t brace = out.rfind("\n{");
  const nlohmann::json got = nlohmann::json::parse(
      brace == std::string::npos ? out : out.substr(brace + 1), nullptr, false);
  ASSERT_TRUE(got.is_object()) << out;
  const int64_t id = got.value("id", int64_t{0});
  EXPECT_EQ(got["state"], "STATE_COMPLETED") << out;
  EXPECT_EQ(StateOf(id), "STATE_COMPLETED");
  const nlohmann::json trials = Get("/api/v1/experiments/" + std::to_string(id) + "/trials");
  ASSERT_EQ(got["trials"].size(), 1u) << out;
  EXPECT_EQ(got["trials"][0], trials["trials"][0]["id"]);
  EXPECT_EQ(got["experiments"].size(), 2u) << out;
  // The best checkpoint by the searcher's metric (x; smaller is better, Determined's default)
  // among those with a validation at their step.
  const nlohmann::json checkpoints =
      Get("/api/v1/experiments/" + std::to_string(id) + "/checkpoints")["checkpoints"];
  std::string best;
  double best_x = 0;
  for (const auto& c : checkpoints) {
    const nlohmann::json& values = c["training"]["validationMetrics"]["avgMetrics"];
    if (!values.is_object() || !values.contains("x")) continue;
    if (best.empty() || values["x"].get<double>() < best_x) {
      best = c.value("uuid", "");
      best_x = values["x"].get<double>();
    }
  }
  ASSERT_FALSE(best.empty()) << checkpoints.dump();
  EXPECT_EQ(got["top"], best) << out;
  // client.get_checkpoint, and add_metadata through Determined's PostCheckpointMetadata.
  EXPECT_EQ(got["fetched"]["trial"], got["trials"][0]) << out;
  EXPECT_EQ(got["fetched"]["metadata"].value("reviewed", ""), "yes") << out;
  EXPECT_EQ(Get("/api/v1/checkpoints/" + best)["checkpoint"]["metadata"].value("reviewed", ""),
            "yes");
  EXPECT_NE(got["downloaded"].dump().find("metadata.json"), std::string::npos) << out;
  const nlohmann::json validations = Metrics(got["trials"][0].get<int64_t>(), "validation");
  ASSERT_EQ(got["validation_steps"].size(), validations["metrics"].size()) << out;
  EXPECT_TRUE(testing::Eventually(
      [&] { return StateOf(got.value("killed", int64_t{0})) == "STATE_CANCELED"; }, 60s));
}

}  // namespace
}  // namespace det

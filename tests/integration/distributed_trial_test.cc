// Distributed trials: a trial whose slots span two agents runs one container on each; they meet
// at the master's rendezvous, learn their ranks and the chief's address, and talk over it. A
// container that never arrives fails the run after the rendezvous timeout (a restart).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/testing/cluster_fixture.h"

namespace det {
namespace {

namespace fs = std::filesystem;

// Rank 1 sends a line to the chief at the rendezvous' chief address and port; the chief reports
// what it got as the trial's validation. With hparam stall_first_run, rank 1's first run never
// comes to the rendezvous.
constexpr const char* kTrialCode = R"(import socket, sys, time
import det_harness
ctx = det_harness.init()
if ctx.hparams.get("stall_first_run") and ctx.container_rank == 1 and ctx.run_id == 1:
    print("rank 1 stalls")
    while not ctx.should_preempt():
        time.sleep(0.1)
    sys.exit(1)
info = ctx.rendezvous()
print("rank %d of %d, world size %d, chief %s:%d, gloo %s" % (info["rank"], info["num_containers"],
      info["world_size"], info["chief_address"], info["chief_port"], info["gloo_port_range"]))
if info["rank"] == 0:
    server = socket.create_server(("", info["chief_port"]))
    server.settimeout(60)
    conn, _ = server.accept()
    print("chief got: " + conn.recv(100).decode())
    ctx.report_validation_metrics(ctx.max_length, {"validation_loss": 0.5})
else:
    for attempt in range(200):
        try:
            with socket.create_connection((info["chief_address"], info["chief_port"]), 5) as c:
                c.sendall(b"hello from rank %d" % info["rank"])
            break
        except OSError:
            time.sleep(0.05)
)";

class DistributedTrialTest : public testing::ClusterProcessTest {
 protected:
  std::string ExtraConfig() const override {
    return "task_container_defaults:\n  gloo_port_range: \"29400:29999\"\n"
           "  rendezvous_timeout: 3s\n";
  }
  // Submits the two-slot trial; its id.
  int64_t CreateTrial(bool stall_first_run) {
    const fs::path model = dir_ / "model";
    fs::create_directories(model);
    std::ofstream(model / "dist.py") << kTrialCode;
    std::ofstream(dir_ / "dist.yaml")
        << "name: dist\nentrypoint: python3 dist.py\n"
        << "hyperparameters: {stall_first_run: " << (stall_first_run ? "true" : "false") << "}\n"
        << "searcher: {name: single, metric: validation_loss, max_length: {batches: 1}}\n"
        << "resources: {slots_per_trial: 2}\nmax_restarts: 1\n"
        << "checkpoint_storage: {type: shared_fs, host_path: " << (dir_ / "ckpt").string() << "}\n";
    auto reply = nlohmann::json::parse(
        Det("--json experiment create " + (dir_ / "dist.yaml").string() + " " + model.string()),
        nullptr, false);
    EXPECT_TRUE(reply.is_object());
    return reply.is_object() ? reply.value("id", int64_t{0}) : 0;
  }
  // The trial once its experiment ended, and every line its runs printed.
  struct Finished {
    nlohmann::json trial;
    std::string logs;
  };
  Finished Run(bool stall_first_run) {
    const int64_t id = CreateTrial(stall_first_run);
    Det("experiment wait " + std::to_string(id));
    auto described = nlohmann::json::parse(Det("--json experiment describe " + std::to_string(id)),
                                           nullptr, false);
    EXPECT_TRUE(described.is_object());
    if (!described.is_object()) return {};
    nlohmann::json trial = described["trials"][0];
    return {trial, Det("trial logs -f " + std::to_string(trial.value("id", 0)))};
  }
};

TEST_F(DistributedTrialTest, ContainersOnTwoAgentsMeetAtTheRendezvousAndTalkThroughTheChief) {
  auto a = StartAgent("agent-d1", 1);
  auto b = StartAgent("agent-d2", 1);
  const auto [trial, logs] = Run(false);
  EXPECT_EQ(trial.value("state", ""), "COMPLETED") << Log("master.log");
  EXPECT_EQ(trial.value("restarts", -1), 0);
  EXPECT_NE(logs.find("rank 0 of 2, world size 2, chief 127.0.0.1:29"), std::string::npos) << logs;
  EXPECT_NE(logs.find("rank 1 of 2, world size 2"), std::string::npos) << logs;
  EXPECT_NE(logs.find("gloo 29400:29999"), std::string::npos) << logs;
  EXPECT_NE(logs.find("chief got: hello from rank 1"), std::string::npos) << logs;
}

TEST_F(DistributedTrialTest, AContainerThatNeverArrivesFailsTheRunAfterTheTimeout) {
  auto a = StartAgent("agent-d3", 1);
  auto b = StartAgent("agent-d4", 1);
  const auto [trial, logs] = Run(true);
  EXPECT_EQ(trial.value("state", ""), "COMPLETED") << Log("master.log");
  EXPECT_EQ(trial.value("restarts", 0), 1) << "the failed rendezvous counts";
  EXPECT_EQ(trial.value("run_id", 0), 2);
  EXPECT_NE(logs.find("timed out: container(s) 1 of 2 never arrived"), std::string::npos) << logs;
  EXPECT_NE(logs.find("chief got: hello from rank 1"), std::string::npos) << logs;
}

}  // namespace
}  // namespace det

// Determined's PyTorch Trainer under the cluster next to the same script run locally (issue 52):
// the wall time of one MNIST-sized trial of N batches on CPU, the tutorial's train.py
// (examples/tutorials/mnist_pytorch of Determined 0.38.1, unmodified) in Determined's local mode
// (`python3 train.py --epochs 1` where det.get_cluster_info() is None: it trains, validates at
// every 100 batches and checkpoints into ./checkpoints) and as an experiment (its const.yaml)
// on a real det-master and one det-agent of one slot: from `det experiment create` until the
// master records it COMPLETED, so scheduling, the launcher, fetching the model definition,
// metrics, checkpoints and logs are all counted. The data is N x 64 MNIST-format images
// (tests/data/mnist_files.py), so that one epoch is N batches. Goal: the cluster adds < 5 %.
//
//   trainer_bench            N = 1,000 (twice each, alternating)
//   trainer_bench --short    N = 50, once each (CI: only that both run)
//   --batches N              N batches instead
//
// Needs ../shared/conformance (Determined's library; DET_CONFORMANCE_DIR names another) and
// /usr/bin/python3 with torch and torchvision: without them it says what is missing and exits 0.
// Exit status 1 only on a functional failure (a run that failed, a wait past its limit).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_cluster.h"
#include "bench/determined_library.h"

namespace {

namespace fs = std::filesystem;
using det::bench::BenchCluster;
using det::bench::Timed;

// The tutorial's folder with N batches of data, readable by the cluster's task account.
// `conformance`: ../shared/conformance/determined-0.38.1.
bool PrepareTutorial(const fs::path& conformance, const fs::path& into, int batches) {
  const fs::path tutorial = conformance / "examples" / "tutorials" / "mnist_pytorch";
  const std::string source = DET_SOURCE_DIR_DEFAULT;
  return Timed("cp -r '" + tutorial.string() + "' '" + into.string() + "' && chmod -R u+w,go+rX '" +
               into.string() + "' && /usr/bin/python3 '" + source +
               "/tests/data/mnist_files.py' '" + (into / "data").string() + "' " +
               std::to_string(batches * 64) + " 640 && chmod -R go+rX '" + into.string() + "'") >=
         0;
}

// `python3 train.py --epochs 1` in Determined's local mode, in a fresh copy of `tutorial`.
double LocalRun(const fs::path& tutorial, const fs::path& scratch) {
  fs::remove_all(scratch);
  if (Timed("cp -r '" + tutorial.string() + "' '" + scratch.string() + "'") < 0) return -1;
  return Timed("cd '" + scratch.string() + "' && /usr/bin/python3 train.py --epochs 1 > '" +
               (scratch / "local.log").string() + "' 2>&1");
}

// The tutorial's const.yaml as an experiment, from `det experiment create` to COMPLETED.
double ClusterRun(const BenchCluster& cluster, const fs::path& tutorial) {
  const std::string det = cluster.build() + "/cli/det";
  const auto start = std::chrono::steady_clock::now();
  const auto created =
      det::bench::RunForOutput({det, "--json", "experiment", "create",
                                (tutorial / "const.yaml").string(), tutorial.string()},
                               cluster.DetEnvironment());
  if (!created) return -1;
  const nlohmann::json reply = nlohmann::json::parse(*created, nullptr, false);
  const std::string id = std::to_string(reply.is_object() ? reply.value("id", 0) : 0);
  const auto deadline = start + std::chrono::minutes(30);
  while (std::chrono::steady_clock::now() < deadline) {
    const auto described = det::bench::RunForOutput({det, "--json", "experiment", "describe", id},
                                                    cluster.DetEnvironment(), true);
    const nlohmann::json state =
        described ? nlohmann::json::parse(*described, nullptr, false) : nlohmann::json();
    const std::string now =
        state.is_object() ? state["experiment"].value("state", "") : std::string();
    if (now == "COMPLETED") {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    if (now == "ERROR" || now == "CANCELED") {
      std::fprintf(stderr, "experiment %s ended %s\n", id.c_str(), now.c_str());
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  int batches = 1000;
  int rounds = 2;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--short") batches = 50, rounds = 1;
    if (arg == "--batches" && i + 1 < argc) batches = std::stoi(argv[++i]);
  }
  const std::string harness = det::bench::DeterminedLibrary();
  if (harness.empty()) {
    std::printf(
        "trainer: skipped (no ../shared/conformance/determined-0.38.1/harness that "
        "/usr/bin/python3 imports; DET_CONFORMANCE_DIR names another)\n");
    return 0;
  }
  if (std::system("/usr/bin/python3 -c 'import torch, torchvision' >/dev/null 2>&1") != 0) {
    std::printf(
        "trainer: skipped (/usr/bin/python3 has no torch and torchvision: "
        "python3-torch python3-torchvision)\n");
    return 0;
  }
  BenchCluster cluster(det::bench::BuildDir(argv[0]));
  // The runs import the library as the task account (nobody), from a copy it can read, with the
  // stand-in for torch.utils.tensorboard (Debian has no tensorboard): the same for both modes.
  const fs::path library = cluster.dir() / "library";
  const std::string source = DET_SOURCE_DIR_DEFAULT;
  if (Timed("mkdir -p '" + library.string() + "' && cp -r '" + harness + "' '" +
            (source + "/tests/data/tensorboard_stand_in") + "' '" + library.string() +
            "' && chmod -R go+rX '" + cluster.dir().string() + "'") < 0) {
    return 1;
  }
  setenv(
      "PYTHONPATH",
      ((library / "harness").string() + ":" + (library / "tensorboard_stand_in").string()).c_str(),
      1);
  setenv("PATH", ("/usr/bin:" + std::string(std::getenv("PATH"))).c_str(), 1);
  const fs::path tutorial = cluster.dir() / "mnist_pytorch";
  if (!PrepareTutorial(fs::path(harness).parent_path(), tutorial, batches)) return 1;
  cluster.AddConfig("checkpoint_storage:\n  type: shared_fs\n  host_path: " +
                    (cluster.dir() / "checkpoints").string() + "\n");
  fs::create_directories(cluster.dir() / "checkpoints");
  if (auto started = cluster.StartMaster(); !started.ok()) {
    std::fprintf(stderr, "master: %s\n", started.ToString().c_str());
    return 1;
  }
  cluster.StartAgent("agent-0", 1);
  std::printf("one trial of %d batches (batch 64, CPU), wall seconds:\n", batches);
  bool ok = true;
  for (int round = 0; round < rounds; ++round) {
    const double local = LocalRun(tutorial, cluster.dir() / "local-run");
    const double on_cluster = ClusterRun(cluster, tutorial);
    ok = ok && local > 0 && on_cluster > 0;
    std::printf("  local mode (baseline) %7.2f   cluster %7.2f   cluster adds %+.1f %%\n", local,
                on_cluster, local > 0 ? (on_cluster / local - 1) * 100 : 0.0);
  }
  return ok ? 0 : 1;
}

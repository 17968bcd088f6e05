#include "master/trial_launch.h"

#include <nlohmann/json.hpp>

namespace det::master {
namespace {

// Runs as `python3 -c`: fetch, unpack (refusing entries that would land outside the folder),
// then exec the entrypoint. Retries while the master is unreachable (it may be restarting).
constexpr const char* kLauncher = R"PY(
import io, json, os, shlex, ssl, sys, tarfile, time, urllib.error, urllib.request
# An HTTPS master's certificate comes with the run (DET_MASTER_CERT); it is the one to trust.
tls = ssl.create_default_context(cadata=os.environ["DET_MASTER_CERT"]) if os.environ.get("DET_MASTER_CERT") else None
def fetch(path):
    url = os.environ["DET_MASTER_URL"] + path
    headers = {"Authorization": "Bearer " + os.environ["DET_SESSION_TOKEN"]}
    for attempt in range(60):
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=60, context=tls) as r:
                return r.read()
        except urllib.error.HTTPError as e:
            sys.exit("det launcher: GET %s: %s %s" % (path, e.code, e.read().decode(errors="replace")))
        except OSError as e:
            print("det launcher: master unreachable (%s); retrying" % e, file=sys.stderr)
            time.sleep(min(1 + attempt, 5))
    sys.exit("det launcher: gave up reaching the master at " + url)
with tarfile.open(fileobj=io.BytesIO(fetch("/api/v1/trials/%s/context" % os.environ["DET_TRIAL_ID"])), mode="r:gz") as tar:
    for m in tar.getmembers():
        parts = m.name.split("/")
        if m.name.startswith("/") or ".." in parts or not (m.isfile() or m.isdir()):
            sys.exit("det launcher: refusing model definition entry %r" % m.name)
    tar.extractall(".")
with open("det_harness.py", "wb") as f:
    f.write(fetch("/api/v1/harness/det_harness.py"))
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [os.getcwd(), os.environ.get("PYTHONPATH")]))
argv = json.loads(os.environ["DET_ENTRYPOINT"])
if len(argv) == 1:
    # A plain command runs as itself, so that it (not a shell) gets SIGTERM; anything with shell
    # syntax runs through /bin/sh.
    argv = shlex.split(argv[0]) if not set(argv[0]) & set("|&;<>()$`\\\"'*?[#~=%{}") else ["/bin/sh", "-c", argv[0]]
sys.stdout.flush()
os.execvp(argv[0], argv)
)PY";

}  // namespace

std::string CheckpointRoot(const experiment::CheckpointStorage& storage) {
  if (storage.storage_path.empty()) return storage.host_path;
  return storage.host_path + "/" + storage.storage_path;
}

bus::ContainerSpec ContainerOf(const experiment::ExperimentConfig& config) {
  bus::ContainerSpec container;
  container.image = config.container.image;
  container.images = config.container.images;
  container.force_pull = config.container.force_pull_image;
  container.registry_auth_json = config.container.registry_auth_json;
  container.shm_size_bytes = config.resources.shm_size;
  // Trial code writes checkpoints under host_path: the same folder inside the container.
  container.binds = {config.checkpoint_storage.host_path + ":" +
                     config.checkpoint_storage.host_path};
  return container;
}

bus::CommandRunRequest TrialTaskSpec(const experiment::ExperimentConfig& config,
                                     const experiment::Trial& trial,
                                     const TrialLaunchOptions& launch) {
  bus::CommandRunRequest spec;
  spec.entrypoint = {"python3", "-c", kLauncher};
  spec.slots = config.resources.slots_per_trial;
  spec.resource_pool = config.resources.resource_pool;
  spec.priority = config.resources.priority;
  spec.weight = config.resources.weight;
  spec.preemptible = true;
  spec.single_node = config.resources.is_single_node;
  spec.max_slots = config.resources.max_slots;
  spec.env = config.environment_variables;
  spec.container = ContainerOf(config);
  spec.env["DET_MASTER_URL"] = launch.master_url;
  if (!launch.master_cert_pem.empty()) spec.env["DET_MASTER_CERT"] = launch.master_cert_pem;
  spec.env["DET_GLOO_PORT_RANGE"] = launch.gloo_port_range;
  spec.env["DET_NCCL_PORT_RANGE"] = launch.nccl_port_range;
  spec.env["PYTHONUNBUFFERED"] = "1";  // output reaches the logs as it is printed
  spec.env["DET_EXPERIMENT_ID"] = std::to_string(trial.experiment_id);
  spec.env["DET_TRIAL_ID"] = std::to_string(trial.id);
  spec.env["DET_TRIAL_SEED"] = std::to_string(trial.seed);
  spec.env["DET_RUN_ID"] = std::to_string(trial.run_id);
  spec.env["DET_HPARAMS"] = trial.hparams.dump();
  spec.env["DET_LATEST_CHECKPOINT"] = trial.latest_checkpoint;
  spec.env["DET_CHECKPOINT_DIR"] = CheckpointRoot(config.checkpoint_storage);
  spec.env["DET_ENTRYPOINT"] = nlohmann::json(config.entrypoint).dump();
  spec.env["DET_SEARCHER_METRIC"] = config.searcher.metric;
  spec.env["DET_SMALLER_IS_BETTER"] = config.searcher.smaller_is_better ? "1" : "0";
  spec.env["DET_TIME_METRIC"] = config.searcher.time_metric;
  spec.env["DET_MAX_LENGTH"] = std::to_string(config.searcher.max_time);
  if (config.min_validation_period) {
    spec.env["DET_MIN_VALIDATION_PERIOD"] = std::to_string(config.min_validation_period->second);
  }
  return spec;
}

}  // namespace det::master

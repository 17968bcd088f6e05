#include "master/experiments/trial_launch.h"

#include <nlohmann/json.hpp>

namespace det::master {
namespace {

// Runs as `python3 -c`: fetch, unpack (refusing entries that would land outside the folder),
// then exec the entrypoint. Retries while the master is unreachable (it may be restarting).
constexpr const char* kLauncher = R"PY(
import io, json, os, random, re, shlex, socket, ssl, sys, tarfile, time, urllib.error, urllib.parse, urllib.request
# What the trial makes (its checkpoints in the shared folder too) is its account's only: in a
# container as under the process runtime's shim, whatever umask the image has.
os.umask(0o077)
# An HTTPS master's certificate comes with the run (DET_MASTER_CERT); it is the one to trust.
tls = ssl.create_default_context(cadata=os.environ["DET_MASTER_CERT"]) if os.environ.get("DET_MASTER_CERT") else None
def fetch(path, body=None):
    url = os.environ["DET_MASTER_URL"] + path
    headers = {"Authorization": "Bearer " + os.environ["DET_SESSION_TOKEN"]}
    data = None if body is None else json.dumps(body).encode()
    for attempt in range(60):
        try:
            request = urllib.request.Request(url, data=data, headers=headers)
            with urllib.request.urlopen(request, timeout=700, context=tls) as r:
                return r.read()
        except urllib.error.HTTPError as e:
            sys.exit("det launcher: %s %s: %s %s" % (request.get_method(), path, e.code, e.read().decode(errors="replace")))
        except OSError as e:
            print("det launcher: master unreachable (%s); retrying" % e, file=sys.stderr)
            time.sleep(min(1 + attempt, 5))
    sys.exit("det launcher: gave up reaching the master at " + url)
context = fetch("/api/v1/trials/%s/context" % os.environ["DET_TRIAL_ID"])
def unpack(into):
    with tarfile.open(fileobj=io.BytesIO(context), mode="r:gz") as tar:
        for m in tar.getmembers():
            parts = m.name.split("/")
            if m.name.startswith("/") or ".." in parts or not (m.isfile() or m.isdir()):
                sys.exit("det launcher: refusing model definition entry %r" % m.name)
        tar.extractall(into)
unpack(".")
for module in ("det_harness.py", "det_storage.py", "det_gcs.py"):
    with open(module, "wb") as f:
        f.write(fetch("/api/v1/harness/" + module))
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [os.getcwd(), os.environ.get("PYTHONPATH")]))
# Determined's on-cluster contract: /run/determined/info/*.json, which the agent makes this run's own.
def ephemeral_ports():
    # The kernel gives these to outgoing connections, so one chosen from them may be taken before the run binds it.
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low, high = (int(p) for p in f.read().split())
        return range(low, high + 1)
    except (OSError, ValueError):
        return range(0)
def free_port_pair():
    # A port p of gloo_port_range with p + 16 free too: the chief's pair for the library's ZMQ
    # traffic (INTER_TRAIN_PROCESS_COMM_PORT_1 and _2, Determined's offset), so that runs sharing
    # a host do not collide on Determined's fixed 12360 and 12376. Ports outside the kernel's
    # ephemeral range come first.
    first, last = (int(p) for p in os.environ.get("DET_GLOO_PORT_RANGE", "1024:65535").split(":"))
    every = range(first, max(first, last - 16) + 1)
    ephemeral = ephemeral_ports()
    quiet = [p for p in every if p not in ephemeral and p + 16 not in ephemeral]
    pool = quiet or every
    for port in random.sample(pool, min(200, len(pool))):
        try:
            with socket.socket() as a, socket.socket() as b:
                a.bind(("", port))
                b.bind(("", port + 16))
                return port
        except OSError:
            continue
    return 0
def meet(slots):
    # Several containers: each learns every container's address (rank order) at the rendezvous.
    rank, count = int(os.environ.get("DET_CONTAINER_RANK", "0")), int(os.environ.get("DET_NUM_CONTAINERS", "1"))
    if count == 1:
        addresses, slot_counts, port = ["127.0.0.1"], [len(slots)], free_port_pair()
    else:
        host = urllib.parse.urlsplit(os.environ["DET_MASTER_URL"]).hostname or "127.0.0.1"
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect((host, 9))  # UDP: nothing is sent, the route is chosen
            address = probe.getsockname()[0]
        met = json.loads(fetch("/api/v1/allocations/%s/rendezvous" % os.environ["DET_ALLOCATION_ID"],
                               {"rank": rank, "num_containers": count, "address": address, "phase": "launch",
                                "port": free_port_pair() if rank == 0 else 0, "slots": len(slots)}))
        addresses, slot_counts, port = met["addresses"], met["slots"], met["chief_port"]
    if port:
        os.environ["INTER_TRAIN_PROCESS_COMM_PORT_1"] = str(port)
        os.environ["INTER_TRAIN_PROCESS_COMM_PORT_2"] = str(port + 16)
    return addresses, rank, slot_counts
# Determined's master gave each trial its config with Determined's defaults filled in, and its
# library reads these fields without checking for them (the legacy harness, the Trainer).
DEFAULTS = {"min_validation_period": {"batches": 0}, "min_checkpoint_period": {"batches": 0},
            "scheduling_unit": 100, "records_per_epoch": 0, "perform_initial_validation": False,
            "checkpoint_policy": "best", "debug": False,
            "optimizations": {"aggregation_frequency": 1, "average_aggregated_gradients": True,
                              "average_training_metrics": True, "gradient_compression": False,
                              "grad_updates_size_file": None, "mixed_precision": "O0",
                              "tensor_fusion_threshold": 64, "tensor_fusion_cycle_time": 1,
                              "auto_tune_tensor_fusion": False},
            "profiling": {"enabled": False, "begin_on_batch": 0, "end_after_batch": None, "sync_timings": True}}
def with_defaults(config):
    for key, default in DEFAULTS.items():
        given = config.get(key)
        if isinstance(given, dict) and key in ("optimizations", "profiling"):
            config[key] = dict(default, **given)
        elif given is None:
            config[key] = default
    if isinstance(config.get("searcher"), dict):
        config["searcher"].setdefault("smaller_is_better", True)
    return config
def write_info(info):
    os.makedirs(info, exist_ok=True)
    cert_file = None
    if os.environ.get("DET_MASTER_CERT"):
        cert_file = os.environ["DET_MASTER_CERT_FILE"] = os.path.join(info, "master.crt")
        with open(cert_file, "w") as f:
            f.write(os.environ["DET_MASTER_CERT"])
    slots = [s for s in os.environ.get("DET_SLOT_IDS", "").split(",") if s]
    config = with_defaults(json.loads(os.environ["DET_EXPERIMENT_CONFIG"]))
    storage = config.get("checkpoint_storage") or {}
    if storage.get("type") == "shared_fs":
        # The library's shared_fs storage expects a container mount at /determined_shared_fs; the
        # same folder as "directory" storage is where the run finds it on every runtime.
        kept = {k: v for k, v in storage.items() if k.startswith("save_")}
        config["checkpoint_storage"] = dict(kept, type="directory", container_path=os.environ["DET_CHECKPOINT_DIR"])
    addresses, rank, slot_counts = meet(slots)
    documents = {
        "cluster.json": {"master_url": os.environ["DET_MASTER_URL"], "cluster_id": os.environ.get("DET_CLUSTER_ID", ""),
                         "agent_id": os.environ.get("DET_AGENT_ID", ""), "slot_ids": list(range(len(slots))),
                         "task_id": os.environ.get("DET_TASK_ID", ""), "allocation_id": os.environ.get("DET_ALLOCATION_ID", ""),
                         "session_token": os.environ["DET_SESSION_TOKEN"], "task_type": "TRIAL",
                         "master_cert_name": None, "master_cert_file": cert_file,
                         "latest_checkpoint": os.environ.get("DET_LATEST_CHECKPOINT") or None},
        "trial.json": {"trial_id": int(os.environ["DET_TRIAL_ID"]), "experiment_id": int(os.environ["DET_EXPERIMENT_ID"]),
                       "trial_seed": int(os.environ.get("DET_TRIAL_SEED", "0")), "hparams": json.loads(os.environ.get("DET_HPARAMS", "{}")),
                       "config": config, "steps_completed": int(os.environ.get("DET_STEPS_COMPLETED", "0")),
                       "trial_run_id": int(os.environ.get("DET_TRIAL_RUN_ID", "1")), "debug": False,
                       "inter_node_network_interface": None},
        "rendezvous.json": {"container_addrs": addresses, "container_rank": rank, "container_slot_counts": slot_counts},
        "resources.json": {"gpu_uuids": [g for g in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if g]},
    }
    for name, document in documents.items():
        with open(os.path.join(info, name + ".partial"), "w") as f:
            json.dump(document, f)
        os.rename(os.path.join(info, name + ".partial"), os.path.join(info, name))
    mounted = "/run/determined/info"
    if not (os.path.isdir(mounted) and os.path.samefile(info, mounted)):
        print("det launcher: this run has no private %s (the agent could not give it a mount namespace; its log says why): "
              "Determined's library (det.core.init) will run in its off-cluster mode" % mounted, file=sys.stderr)
        return False
    return True
def prepare_run_folder(run):
    # The rest of Determined's /run/determined: the model definition as submitted (the Trainer
    # copies it into every checkpoint's code/), train/logs (without Determined's stdout.log and
    # stderr.log links, so that its launchers' ranks print to the run's own output, which the
    # agent ships), and workdir: the run's working folder.
    unpack(os.path.join(run, "train", "model"))
    os.makedirs(os.path.join(run, "train", "logs"), exist_ok=True)
    workdir = os.path.join(run, "workdir")
    if not os.path.lexists(workdir):
        os.symlink(os.getcwd(), workdir)
# Only where the run folder is the run's /run/determined (and hidden from its working folder,
# which workdir links back to).
if os.environ.get("DET_INFO_DIR") and write_info(os.environ["DET_INFO_DIR"]):
    prepare_run_folder(os.path.dirname(os.environ["DET_INFO_DIR"].rstrip("/")))
# Determined's forms: the slots as a JSON list, and this container's resources.
os.environ["DET_SLOT_IDS"] = json.dumps([s for s in os.environ.get("DET_SLOT_IDS", "").split(",") if s])
os.environ["DET_RESOURCES_ID"] = "%s.%s" % (os.environ.get("DET_ALLOCATION_ID", ""), os.environ.get("DET_CONTAINER_RANK", "0"))
argv = json.loads(os.environ["DET_ENTRYPOINT"])
if len(argv) == 1 and re.fullmatch(r"[a-zA-Z0-9_.]+:[a-zA-Z0-9_]+", argv[0]):
    # Determined's legacy entrypoint, module:TrialClass: run as Determined's launcher ran it,
    # through the library's torch_distributed launcher and harness (the trial's python3 has them).
    argv = ["python3", "-m", "determined.launch.torch_distributed", "--", "--trial", argv[0]]
elif len(argv) == 1:
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
  // Trial code writes shared_fs checkpoints under host_path: the same folder inside the
  // container. A bucket needs no mount.
  if (!config.checkpoint_storage.IsObjectStore()) {
    container.binds = {config.checkpoint_storage.host_path + ":" +
                       config.checkpoint_storage.host_path};
  }
  return container;
}

bus::CommandRunRequest TrialTaskSpec(const experiment::ExperimentConfig& config,
                                     const experiment::Trial& trial,
                                     const TrialLaunchOptions& launch,
                                     const TrialRunIdentity& run) {
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
  spec.env["DET_TRIAL_RUN_ID"] = std::to_string(trial.run_id);
  // Where the run starts counting batches: the checkpoint it restores (Determined's
  // steps_completed, from which its Trainer counts its periods).
  spec.env["DET_STEPS_COMPLETED"] =
      std::to_string(trial.latest_checkpoint.empty() ? 0 : trial.latest_checkpoint_steps);
  spec.env["DET_TASK_TYPE"] = "TRIAL";
  spec.env["DET_CLUSTER_ID"] = launch.cluster_id;
  spec.env["DET_EXPERIMENT_CONFIG"] = run.config_json;
  spec.env["DET_USER"] = run.user.empty() ? "determined" : run.user;
  spec.env["DET_HPARAMS"] = trial.hparams.dump();
  spec.env["DET_LATEST_CHECKPOINT"] = trial.latest_checkpoint;
  if (!config.checkpoint_storage.IsObjectStore()) {
    spec.env["DET_CHECKPOINT_DIR"] = CheckpointRoot(config.checkpoint_storage);
  }
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

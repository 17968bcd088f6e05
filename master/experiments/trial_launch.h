#pragma once

#include <string>

#include "bus/catalog/tasks.h"
#include "master/experiments/experiment/experiment.h"

namespace det::master {

// What trial runs are given besides their experiment's settings.
struct TrialLaunchOptions {
  std::string master_url;  // DET_MASTER_URL: the Core API's base URL as trial code reaches it
  std::string gloo_port_range = "1024:65535";  // DET_GLOO_PORT_RANGE (task_container_defaults)
  std::string nccl_port_range = "1024:65535";  // DET_NCCL_PORT_RANGE
  std::string master_cert_pem;  // DET_MASTER_CERT: the certificate an HTTPS master_url needs
  // master.yaml's checkpoint_storage, merged into each new experiment's config (null: none).
  YAML::Node default_checkpoint_storage;
  // Whether its fields fill in an experiment's storage of the same type (master.yaml set it), or
  // it only stands in for a missing one (the built-in default).
  bool fill_checkpoint_storage_fields = false;
  std::string cluster_id;  // DET_CLUSTER_ID (the database's)
  // How long a run that listens for the preemption signal (a long poll parked, as Determined's
  // library keeps one) has to exit by itself after a pause, cancel or searcher stop before it is
  // sent SIGTERM (task_container_defaults.preemption_timeout). A run not listening gets SIGTERM
  // at once.
  Duration preemption_timeout = std::chrono::hours(1);
  // security.default_task: whom the runs of an owner not linked to an account run as (unset: as
  // the agent).
  std::optional<bus::AgentUserGroup> default_task;
};

// Who a run is, beyond its trial: what Determined's library finds in trial.json and DET_USER.
struct TrialRunIdentity {
  std::string config_json;  // DET_EXPERIMENT_CONFIG: the experiment's config (defaults merged)
  std::string user;         // DET_USER: the experiment's owner ("determined" when unknown)
};

// What a trial's run asks the registry to run: its experiment's resources and environment, the
// trial's identity (DET_TRIAL_ID, DET_EXPERIMENT_ID, DET_HPARAMS, DET_TRIAL_SEED, DET_RUN_ID,
// DET_LATEST_CHECKPOINT, DET_CHECKPOINT_DIR, DET_MASTER_URL, the searcher's metric and length,
// the distributed-training port ranges),
// and as entrypoint a small Python launcher (standard library only) that fetches the model
// definition and the harness from the Core API, unpacks them into the run's working folder,
// writes Determined's info files (cluster.json, trial.json, rendezvous.json after meeting the
// allocation's other containers, resources.json) into DET_INFO_DIR, which the agent shows the run
// at /run/determined/info; where it does, also the model definition at /run/determined/train/model,
// train/logs and workdir (the working folder); and then executes the experiment's entrypoint
// there (a legacy module:TrialClass through Determined's torch_distributed launcher). Checkpoint
// storage of type shared_fs is given to the library as "directory" storage at the same folder;
// a bucket (s3) goes to it as configured, and the run gets no DET_CHECKPOINT_DIR.
// Where a trial runs on an agent whose runtime is docker: environment.image and friends,
// resources.shm_size, and a shared_fs checkpoint folder mounted where trial code expects it.
bus::ContainerSpec ContainerOf(const experiment::ExperimentConfig& config);

bus::CommandRunRequest TrialTaskSpec(const experiment::ExperimentConfig& config,
                                     const experiment::Trial& trial,
                                     const TrialLaunchOptions& launch, const TrialRunIdentity& run);

// The checkpoint folder trial code writes under: host_path[/storage_path].
std::string CheckpointRoot(const experiment::CheckpointStorage& storage);

}  // namespace det::master

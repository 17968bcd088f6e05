#pragma once

#include <string>

#include "bus/catalog/tasks.h"
#include "master/experiment/experiment.h"

namespace det::master {

// What trial runs are given besides their experiment's settings.
struct TrialLaunchOptions {
  std::string master_url;  // DET_MASTER_URL: the Core API's base URL as trial code reaches it
  std::string gloo_port_range = "1024:65535";  // DET_GLOO_PORT_RANGE (task_container_defaults)
  std::string nccl_port_range = "1024:65535";  // DET_NCCL_PORT_RANGE
  std::string master_cert_pem;  // DET_MASTER_CERT: the certificate an HTTPS master_url needs
};

// What a trial's run asks the registry to run: its experiment's resources and environment, the
// trial's identity (DET_TRIAL_ID, DET_EXPERIMENT_ID, DET_HPARAMS, DET_TRIAL_SEED, DET_RUN_ID,
// DET_LATEST_CHECKPOINT, DET_CHECKPOINT_DIR, DET_MASTER_URL, the searcher's metric and length,
// the distributed-training port ranges),
// and as entrypoint a small Python launcher (standard library only) that fetches the model
// definition and the harness from the Core API, unpacks them into the run's working folder and
// then executes the experiment's entrypoint there.
// Where a trial runs on an agent whose runtime is docker: environment.image and friends,
// resources.shm_size, and the checkpoint storage mounted where trial code expects it.
bus::ContainerSpec ContainerOf(const experiment::ExperimentConfig& config);

bus::CommandRunRequest TrialTaskSpec(const experiment::ExperimentConfig& config,
                                     const experiment::Trial& trial,
                                     const TrialLaunchOptions& launch);

// The checkpoint folder trial code writes under: host_path[/storage_path].
std::string CheckpointRoot(const experiment::CheckpointStorage& storage);

}  // namespace det::master

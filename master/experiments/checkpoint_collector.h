#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "bus/catalog/workload.h"
#include "bus/rpc_client.h"
#include "common/status.h"
#include "master/experiments/bucket_remover.h"
#include "master/experiments/experiment/experiment.h"
#include "master/experiments/experiment_records.h"

namespace det::master {

// Checkpoint garbage collection and experiment deletion.
//
// shared_fs checkpoint files live where agents see them (host_path, not necessarily mounted on
// the master's host), so removing them is a task: `rm -rf` of the checkpoint folders, with no
// slots, run by the agent registry on some agent (Determined's checkpoint GC task). Checkpoints
// in a bucket (s3) the master removes itself, on the BucketRemover's thread: every object under
// `<prefix>/<uuid>/`. Before a removal starts, its checkpoints are claimed in PostgreSQL
// (ExperimentRecords::ClaimForRemoval): one a model version registered meanwhile is left out,
// and a registration after the claim is refused. A checkpoint is marked DELETED only once its
// removal succeeded; one whose removal never started gives its claim back; a failed one (some of
// its files may be gone) stays claimed and COMPLETED, and the next collection (at the latest
// when the master starts again) tries it again.
//
// Threading: not thread-safe; owned by the experiment service's thread, sharing its registry
// client and records.
class CheckpointCollector {
 public:
  // The account on agents an experiment's tasks run as (its owner's; nullopt: the agent's own),
  // or why it cannot be known (then nothing is removed for it).
  using AccountOf =
      std::function<Result<std::optional<bus::AgentUserGroup>>(int64_t experiment_id)>;

  // Removal tasks run as the experiment's account (`account_of`), as its trials did: they remove
  // only what that account may.
  // `cluster_id` names the folder Determined's library syncs TensorBoard files to in a bucket.
  CheckpointCollector(bus::RpcClient& registry, ExperimentRecords& records, AccountOf account_of,
                      std::string cluster_id)
      : registry_(registry),
        records_(records),
        account_of_(std::move(account_of)),
        cluster_id_(std::move(cluster_id)) {}

  // Removes the checkpoints of `experiment`'s ended trials that its save_* policy does not keep.
  void Collect(const experiment::Experiment& experiment);
  // Removes every checkpoint of `experiment` (and, in a bucket, its TensorBoard files), then its
  // rows (DELETING): Poll() reports the end.
  void Delete(const experiment::Experiment& experiment);

  // Starts removals for `uuids` of the experiment (those not already being removed): a user's
  // deletion of some checkpoints (Determined's DeleteCheckpoints), and what Collect and Delete
  // choose.
  Status Remove(const experiment::Experiment& experiment, std::vector<std::string> uuids);

  // Reads the registry's view of the tasks this collector started and records what they did.
  // Returns the deletions that ended: experiment id, and Ok or why its files are not all gone.
  std::vector<std::pair<int64_t, Status>> Poll();

 private:
  struct Removal {
    int64_t experiment_id = 0;
    std::vector<std::string> uuids;
    bool in_bucket = false;  // a BucketRemover job, not a task
  };
  Status RemoveByTasks(const experiment::Experiment& experiment,
                       const std::vector<std::string>& uuids);
  // Gives back the claim on checkpoints whose removal never started (logged when it cannot).
  void Unclaim(const experiment::Experiment& experiment, const std::vector<std::string>& uuids);
  // Removes every object under `key_prefixes`; `uuids` (their checkpoints) are DELETED after.
  void RemoveFromBucket(const experiment::Experiment& experiment,
                        const std::vector<std::string>& uuids,
                        std::vector<std::string> key_prefixes);
  // The removal tasks that ended, from the registry's view of them.
  void PollTasks();
  bool Removing(int64_t experiment_id) const;
  // The removal ended: marks its checkpoints DELETED if it succeeded.
  void Ended(const Removal& removal, const Status& outcome);
  // Deletions with no removal left: their rows go, or they fail with what went wrong.
  void FinishDeletions(std::vector<std::pair<int64_t, Status>>* finished);

  bus::RpcClient& registry_;
  ExperimentRecords& records_;
  AccountOf account_of_;
  std::string cluster_id_;
  BucketRemover bucket_remover_;
  std::map<std::string, Removal> removals_;  // by task id (or bucket job id)
  std::set<std::string> removing_;           // uuids with a removal task
  std::map<int64_t, Status> deletions_;      // experiment -> first failure of its removals
};

}  // namespace det::master

#include "master/experiments/checkpoint_collector.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "bus/catalog/tasks.h"
#include "bus/catalog/workload.h"
#include "bus/rpc_client.h"
#include "master/experiments/experiment/checkpoint_policy.h"
#include "master/experiments/trial_launch.h"
#include "object_store/checkpoint_keys.h"

namespace det::master {
namespace {

constexpr size_t kFoldersPerTask = 500;  // keeps a task's argv far below the kernel's limit

std::vector<experiment::CheckpointScore> ScoresOf(
    const std::vector<storage::ScoredCheckpoint>& stored) {
  std::vector<experiment::CheckpointScore> scores;
  for (const auto& c : stored) {
    scores.push_back({c.uuid, c.trial_id, c.steps_completed, c.metric});
  }
  return scores;
}

}  // namespace

void CheckpointCollector::Collect(const experiment::Experiment& experiment) {
  const experiment::ExperimentConfig& config = experiment.config();
  auto stored = records_.ScoredCheckpoints(experiment.id(), config.searcher.metric);
  if (!stored.ok()) {
    spdlog::warn("experiment {}: checkpoints not collected: {}", experiment.id(),
                 stored.status().message());
    return;
  }
  std::set<int64_t> ended;
  for (const auto& [id, trial] : experiment.trials()) {
    if (experiment::IsTerminal(trial.state)) ended.insert(id);
  }
  Status started = Remove(
      experiment, experiment::CheckpointsToDelete(ScoresOf(*stored), config.checkpoint_storage,
                                                  config.searcher.smaller_is_better, ended));
  if (!started.ok()) {
    spdlog::warn("experiment {}: checkpoints not collected: {}", experiment.id(),
                 started.message());
  }
}

void CheckpointCollector::Delete(const experiment::Experiment& experiment) {
  auto stored = records_.ScoredCheckpoints(experiment.id(), "");
  Status outcome = stored.status();
  if (outcome.ok()) {
    std::vector<std::string> uuids;
    for (const storage::ScoredCheckpoint& checkpoint : *stored) uuids.push_back(checkpoint.uuid);
    outcome = Remove(experiment, std::move(uuids));
  }
  const experiment::CheckpointStorage& storage = experiment.config().checkpoint_storage;
  if (outcome.ok() && storage.IsObjectStore()) {
    RemoveFromBucket(
        experiment, {},
        {object_store::TensorboardKeyPrefix(storage.prefix, cluster_id_, experiment.id())});
  }
  deletions_.emplace(experiment.id(), outcome);
}

Status CheckpointCollector::Remove(const experiment::Experiment& experiment,
                                   std::vector<std::string> uuids) {
  std::erase_if(uuids, [&](const std::string& uuid) { return removing_.count(uuid) > 0; });
  if (uuids.empty()) return Status::Ok();
  // Claimed in PostgreSQL first: one a model version registered since it was chosen is kept, and
  // a registration from now on is refused.
  DET_ASSIGN_OR_RETURN(uuids, records_.ClaimForRemoval(uuids));
  if (uuids.empty()) return Status::Ok();
  const experiment::CheckpointStorage& storage = experiment.config().checkpoint_storage;
  if (storage.IsObjectStore()) {
    // Only the objects of checkpoints the experiment's trials reported (checked UUIDs), never
    // anything else under the prefix.
    std::vector<std::string> key_prefixes;
    for (const std::string& uuid : uuids) {
      key_prefixes.push_back(object_store::CheckpointKeyPrefix(storage.prefix, uuid));
    }
    RemoveFromBucket(experiment, uuids, std::move(key_prefixes));
    return Status::Ok();
  }
  return RemoveByTasks(experiment, uuids);
}

void CheckpointCollector::Unclaim(const experiment::Experiment& experiment,
                                  const std::vector<std::string>& uuids) {
  if (uuids.empty()) return;
  Status released = records_.ReleaseRemovalClaim(uuids);
  if (!released.ok()) {
    spdlog::warn("experiment {}: {} checkpoint(s) not removed stay claimed: {}", experiment.id(),
                 uuids.size(), released.message());
  }
}

Status CheckpointCollector::RemoveByTasks(const experiment::Experiment& experiment,
                                          const std::vector<std::string>& uuids) {
  auto account = account_of_(experiment.id());
  if (!account.ok()) {
    Unclaim(experiment, uuids);  // nothing started: they may be registered again
    return account.status().WithContext("cannot read the owner's account on agents");
  }
  const std::string root = CheckpointRoot(experiment.config().checkpoint_storage);
  for (size_t first = 0; first < uuids.size(); first += kFoldersPerTask) {
    Removal removal{experiment.id(), {}, false};
    bus::TaskSubmitRequest submit{
        "checkpoint-gc-" + std::to_string(experiment.id()) + "-" + bus::RandomId(),
        "CHECKPOINT_GC",
        "experiment-" + std::to_string(experiment.id()),
        {}};
    submit.spec.entrypoint = {"rm", "-rf", "--"};
    submit.spec.slots = 0;
    submit.spec.run_as = *account;
    for (size_t i = first; i < uuids.size() && i < first + kFoldersPerTask; ++i) {
      submit.spec.entrypoint.push_back(root + "/" + uuids[i]);  // uuids are checked UUIDs
      removal.uuids.push_back(uuids[i]);
    }
    auto submitted = registry_.Call<bus::TaskSubmitRequest, bus::CommandRunReply>(submit);
    if (!submitted.ok()) {
      // This part may have been taken without its answer reaching us: it stays claimed (the next
      // collection tries it again). The parts after it never went: they may be registered again.
      const size_t next = std::min(uuids.size(), first + kFoldersPerTask);
      Unclaim(experiment,
              std::vector<std::string>(uuids.begin() + static_cast<ptrdiff_t>(next), uuids.end()));
      return submitted.status();
    }
    removing_.insert(removal.uuids.begin(), removal.uuids.end());
    removals_[submit.task_id] = std::move(removal);
    spdlog::info("experiment {}: removing {} checkpoint(s) ({})", experiment.id(),
                 removals_[submit.task_id].uuids.size(), submit.task_id);
  }
  return Status::Ok();
}

void CheckpointCollector::RemoveFromBucket(const experiment::Experiment& experiment,
                                           const std::vector<std::string>& uuids,
                                           std::vector<std::string> key_prefixes) {
  const experiment::CheckpointStorage& storage = experiment.config().checkpoint_storage;
  BucketRemover::Job job{
      "bucket-removal-" + std::to_string(experiment.id()) + "-" + bus::RandomId(),
      {storage.type, storage.bucket, storage.access_key, storage.secret_key, storage.endpoint_url},
      std::move(key_prefixes)};
  removing_.insert(uuids.begin(), uuids.end());
  removals_[job.id] = Removal{experiment.id(), uuids, true};
  spdlog::info(
      "experiment {}: removing {} from {}://{} ({})", experiment.id(),
      uuids.empty() ? "its TensorBoard files" : std::to_string(uuids.size()) + " checkpoint(s)",
      storage.type, storage.bucket, job.id);
  bucket_remover_.Submit(std::move(job));
}

bool CheckpointCollector::Removing(int64_t experiment_id) const {
  for (const auto& [task_id, removal] : removals_) {
    if (removal.experiment_id == experiment_id) return true;
  }
  return false;
}

std::vector<std::pair<int64_t, Status>> CheckpointCollector::Poll() {
  std::vector<std::pair<int64_t, Status>> finished;
  for (BucketRemover::Done& done : bucket_remover_.TakeDone()) {
    auto removal = removals_.find(done.id);
    if (removal == removals_.end()) continue;
    if (done.outcome.ok()) {
      spdlog::info("experiment {}: removed {} object(s), {} bytes, of {} checkpoint(s) ({})",
                   removal->second.experiment_id, done.objects, done.bytes,
                   removal->second.uuids.size(), done.id);
    }
    Ended(removal->second, done.outcome);
    removals_.erase(removal);
  }
  PollTasks();
  FinishDeletions(&finished);
  return finished;
}

void CheckpointCollector::PollTasks() {
  bus::TaskListRequest request;
  for (const auto& [task_id, removal] : removals_) {
    if (!removal.in_bucket) request.task_ids.push_back(task_id);
  }
  if (request.task_ids.empty()) return;
  auto listed = registry_.Call<bus::TaskListRequest, bus::TaskList>(request);
  if (!listed.ok()) {
    spdlog::warn("checkpoint collection: cannot read its tasks: {}", listed.status().message());
    return;
  }
  std::map<std::string, Status> ended;
  for (const std::string& task_id : request.task_ids) {
    ended[task_id] = Unavailable("its task " + task_id + " is gone");
  }
  for (const bus::TaskSummary& task : listed->tasks) {
    if (task.state != bus::kWorkloadTerminated) {
      ended.erase(task.id);
    } else if (task.exit_code == 0) {
      ended[task.id] = Status::Ok();
    } else {
      ended[task.id] = Internal("task " + task.id + " exited " + std::to_string(task.exit_code) +
                                (task.message.empty() ? "" : ": " + task.message));
    }
  }
  for (const auto& [task_id, outcome] : ended) {
    Ended(removals_.at(task_id), outcome);
    removals_.erase(task_id);
  }
}

void CheckpointCollector::Ended(const Removal& removal, const Status& outcome) {
  for (const std::string& uuid : removal.uuids) removing_.erase(uuid);
  Status marked = outcome;
  // A failed removal keeps its claim: some files may be gone (rm -rf and a bucket job go on past
  // an error), so none of them may be registered; the next collection tries them again.
  if (outcome.ok()) marked = records_.CheckpointsRemoved(removal.uuids);
  if (!marked.ok()) {
    spdlog::warn("experiment {}: {} checkpoint(s) not removed: {}", removal.experiment_id,
                 removal.uuids.size(), marked.message());
  }
  auto deletion = deletions_.find(removal.experiment_id);
  if (deletion != deletions_.end() && deletion->second.ok()) deletion->second = marked;
}

void CheckpointCollector::FinishDeletions(std::vector<std::pair<int64_t, Status>>* finished) {
  for (auto it = deletions_.begin(); it != deletions_.end();) {
    const int64_t experiment_id = it->first;
    if (Removing(experiment_id)) {
      ++it;
      continue;
    }
    Status deleted = it->second;
    if (deleted.ok()) deleted = records_.DeleteExperiment(experiment_id);
    finished->emplace_back(experiment_id, deleted);
    it = deletions_.erase(it);
  }
}

}  // namespace det::master

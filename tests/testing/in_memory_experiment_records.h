#pragma once

// The experiment service's records in memory (master/experiments/experiment_records.h), for its
// unit tests: rows as the service stored them, every Store() call in order (what was stored
// together), and records out of reach when the test says so (SetReachable(false): every call is
// Unavailable and nothing changes). A test may also write rows as a previous master left them
// (Seed*) before a service restores them. Thread-safe: the service calls on its thread while the
// test reads.

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "master/experiments/experiment_records.h"

namespace det::testing {

class InMemoryExperimentRecords final : public master::ExperimentRecords {
 public:
  struct Snapshot {
    std::map<int64_t, storage::ExperimentRecord> experiments;  // by id
    std::map<int64_t, storage::TrialRecord> trials;            // by id
    std::vector<master::ExperimentChanges> stores;             // each Store() that was stored
    std::vector<std::string> removed_checkpoints;              // uuids marked DELETED, in order
  };

  Snapshot Read() const {
    std::lock_guard lock(mu_);
    return rows_;
  }
  void SetReachable(bool reachable) {
    std::lock_guard lock(mu_);
    reachable_ = reachable;
  }
  // A checkpoint a trial reported (COMPLETED), with its validation's metric value.
  void SeedCheckpoint(int64_t experiment_id, storage::ScoredCheckpoint checkpoint) {
    std::lock_guard lock(mu_);
    checkpoints_[experiment_id].push_back(std::move(checkpoint));
  }
  // A checkpoint a model version registers: left out of ScoredCheckpoints.
  void SeedRegistered(const std::string& uuid) {
    std::lock_guard lock(mu_);
    registered_.insert(uuid);
  }
  void SeedValidation(storage::MetricPoint point) {
    std::lock_guard lock(mu_);
    validations_.push_back(std::move(point));
  }

  Result<int64_t> CreateExperiment(const storage::NewExperiment& experiment) override {
    std::lock_guard lock(mu_);
    if (!reachable_) return OutOfReach();
    const int64_t id = next_experiment_id_++;
    storage::ExperimentRecord& record = rows_.experiments[id];
    record.id = id;
    record.name = experiment.name;
    record.config = experiment.config;
    record.state = experiment.state;
    record.owner_id = experiment.owner_id;
    return id;
  }
  Result<std::vector<storage::ExperimentRecord>> Experiments() override {
    std::lock_guard lock(mu_);
    if (!reachable_) return OutOfReach();
    std::vector<storage::ExperimentRecord> records;
    for (const auto& [id, record] : rows_.experiments) records.push_back(record);
    return records;
  }
  Result<master::StoredTrials> TrialsOf(int64_t experiment_id) override {
    std::lock_guard lock(mu_);
    if (!reachable_) return OutOfReach();
    master::StoredTrials stored;
    for (const auto& [id, trial] : rows_.trials) {
      if (trial.experiment_id != experiment_id) continue;
      stored.trials.push_back(trial);
      for (const storage::MetricPoint& point : validations_) {
        if (point.trial_id == id) stored.validations.push_back(point);
      }
    }
    return stored;
  }
  Result<int64_t> NextTrialId() override {
    std::lock_guard lock(mu_);
    if (!reachable_) return OutOfReach();
    return next_trial_id_++;
  }
  Result<std::optional<bus::AgentUserGroup>> AgentAccountOf(int64_t) override {
    std::lock_guard lock(mu_);
    if (!reachable_) return OutOfReach();
    return std::optional<bus::AgentUserGroup>();
  }
  Status Store(const master::ExperimentChanges& changes) override {
    std::lock_guard lock(mu_);
    if (!reachable_) return OutOfReach();
    for (const master::TrialRow& row : changes.created) {
      if (rows_.trials.count(row.id)) return AlreadyExists("trial " + std::to_string(row.id));
      Write(row);
    }
    for (const master::TrialRow& row : changes.updated) Write(row);
    for (const master::ExperimentRow& row : changes.experiments) {
      storage::ExperimentRecord& record = rows_.experiments[row.id];
      record.state = row.state;
      record.end_ns = row.end_ns;
      record.searcher_state = row.searcher_state;
      if (row.continued_config) {
        record.config = *row.continued_config;
        record.name = row.continued_name;
      }
    }
    rows_.stores.push_back(changes);
    return Status::Ok();
  }
  Result<std::vector<storage::ScoredCheckpoint>> ScoredCheckpoints(int64_t experiment_id,
                                                                   const std::string&) override {
    std::lock_guard lock(mu_);
    if (!reachable_) return OutOfReach();
    std::vector<storage::ScoredCheckpoint> unregistered = checkpoints_[experiment_id];
    std::erase_if(unregistered, [&](const auto& c) { return registered_.count(c.uuid) > 0; });
    return unregistered;
  }
  Result<std::vector<std::string>> RegisteredAmong(const std::vector<std::string>& uuids) override {
    std::lock_guard lock(mu_);
    if (!reachable_) return OutOfReach();
    std::vector<std::string> registered;
    for (const std::string& uuid : uuids) {
      if (registered_.count(uuid)) registered.push_back(uuid);
    }
    return registered;
  }
  Result<std::vector<std::string>> ClaimForRemoval(const std::vector<std::string>& uuids) override {
    std::lock_guard lock(mu_);
    if (!reachable_) return OutOfReach();
    std::vector<std::string> claimed;
    for (const std::string& uuid : uuids) {
      if (!registered_.count(uuid)) claimed.push_back(uuid);
    }
    return claimed;
  }
  Status ReleaseRemovalClaim(const std::vector<std::string>&) override {
    std::lock_guard lock(mu_);
    return reachable_ ? Status::Ok() : OutOfReach();
  }
  Result<std::optional<storage::CheckpointRecord>> Checkpoint(const std::string& uuid) override {
    std::lock_guard lock(mu_);
    if (!reachable_) return OutOfReach();
    for (const auto& [experiment_id, checkpoints] : checkpoints_) {
      for (const storage::ScoredCheckpoint& c : checkpoints) {
        if (c.uuid == uuid) {
          return std::optional<storage::CheckpointRecord>(
              storage::CheckpointRecord{c.uuid, c.trial_id, c.steps_completed, "COMPLETED"});
        }
      }
    }
    return std::optional<storage::CheckpointRecord>();
  }
  Result<std::optional<storage::CheckpointRecord>> LatestCheckpointOf(int64_t trial_id) override {
    std::lock_guard lock(mu_);
    if (!reachable_) return OutOfReach();
    std::optional<storage::ScoredCheckpoint> latest;
    for (const auto& [experiment_id, checkpoints] : checkpoints_) {
      for (const storage::ScoredCheckpoint& c : checkpoints) {
        if (c.trial_id == trial_id && (!latest || c.steps_completed > latest->steps_completed)) {
          latest = c;
        }
      }
    }
    if (!latest) return std::optional<storage::CheckpointRecord>();
    return std::optional(storage::CheckpointRecord{latest->uuid, latest->trial_id,
                                                   latest->steps_completed, "COMPLETED"});
  }
  Status CheckpointsRemoved(const std::vector<std::string>& uuids) override {
    std::lock_guard lock(mu_);
    if (!reachable_) return OutOfReach();
    for (auto& [experiment_id, checkpoints] : checkpoints_) {
      std::erase_if(checkpoints, [&](const storage::ScoredCheckpoint& checkpoint) {
        return std::find(uuids.begin(), uuids.end(), checkpoint.uuid) != uuids.end();
      });
    }
    rows_.removed_checkpoints.insert(rows_.removed_checkpoints.end(), uuids.begin(), uuids.end());
    return Status::Ok();
  }
  Status DeleteExperiment(int64_t experiment_id) override {
    std::lock_guard lock(mu_);
    if (!reachable_) return OutOfReach();
    rows_.experiments.erase(experiment_id);
    std::erase_if(rows_.trials,
                  [&](const auto& entry) { return entry.second.experiment_id == experiment_id; });
    return Status::Ok();
  }

 private:
  static Status OutOfReach() { return Unavailable("the test's records are out of reach"); }
  void Write(const master::TrialRow& row) {
    storage::TrialRecord& trial = rows_.trials[row.id];
    trial.id = row.id;
    trial.experiment_id = row.experiment_id;
    trial.request_id = row.request_id;
    trial.hparams_json = row.hparams_json;
    trial.state = row.state;
    trial.restarts = row.restarts;
    trial.run_id = row.run_id;
    trial.end_ns = row.end_ns;
  }

  mutable std::mutex mu_;
  bool reachable_ = true;
  int64_t next_experiment_id_ = 1;
  int64_t next_trial_id_ = 1;
  Snapshot rows_;
  std::map<int64_t, std::vector<storage::ScoredCheckpoint>> checkpoints_;
  std::vector<storage::MetricPoint> validations_;
  std::set<std::string> registered_;
};

}  // namespace det::testing

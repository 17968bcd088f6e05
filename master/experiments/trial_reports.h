#pragma once

// What trial runs tell the master through the Core API, as typed calls (the HTTP routes only
// translate transport): who is calling, their metrics and checkpoints (committed to PostgreSQL
// before the answer, then told to the experiment service, whose answer says whether the run should
// stop), their model definition, and ending an allocation whose run failed.

#include <cstdint>
#include <string>
#include <zmq.hpp>

#include "bus/catalog/experiments.h"
#include "common/status.h"
#include "master/auth/allocation_token.h"
#include "storage/database.h"
#include "storage/experiments_repo.h"

namespace det::master {

// Who is calling: an allocation of run `run_id` of trial `trial_id` ("trial-<id>-<run>.<n>").
// A metric group trial code may report and readers may ask for: "training", "validation" (the
// searcher sees these), or a group of its own (Determined's custom groups): 1 to 64 of a-z, 0-9
// and '_', not a report kind of the experiment service (checkpoint, exit, progress, ready).
// InvalidArgument saying so, naming `field`.
Status CheckMetricGroup(const std::string& group, const std::string& field);

struct TrialRun {
  std::string allocation_id;
  int64_t trial_id = 0;
  int32_t run_id = 0;
  int64_t experiment_id = 0;  // filled by Authenticate
};

// Threading: thread-safe (a pool of database connections; each call asks the actors over inproc
// clients of its own).
class TrialReports {
 public:
  TrialReports(zmq::context_t& context, storage::DbConfig db, AllocationTokens tokens);

  // The run an allocation token speaks for: Unauthenticated for a bad token, PermissionDenied when
  // it is not a trial's, when `trial_id` (0: any) is another trial, or when the trial has moved on
  // to a later run (a restart, a resume after pause: a run cut off from its agent cannot write
  // into the series its successor writes).
  Result<TrialRun> Authenticate(const std::string& token, int64_t trial_id);
  // Stores a training or validation report (a metric sent again is stored once), then tells it.
  Result<bus::TrialSignal> ReportMetrics(const TrialRun& run, bus::TrialReport report);
  // Stores a completed checkpoint, then tells it.
  Result<bus::TrialSignal> ReportCheckpoint(const TrialRun& run,
                                            storage::CheckpointRecord checkpoint);
  // Tells the experiment service (exit, progress, ready); its answer.
  Result<bus::TrialSignal> Tell(const TrialRun& run, bus::TrialReport report);
  // The experiment's model definition (tar.gz); NotFound when there is none.
  Result<std::string> ModelDefinition(const TrialRun& run);
  // Checkpoint `uuid` of the run's experiment, with its trial's experiment id; NotFound for one
  // of another experiment (a run reads its own experiment's checkpoints only).
  Result<std::pair<storage::CheckpointRecord, int64_t>> Checkpoint(const TrialRun& run,
                                                                   const std::string& uuid);
  // Checkpoint `uuid` of any experiment (a user's read), with its experiment id; NotFound.
  Result<std::pair<storage::CheckpointRecord, int64_t>> AnyCheckpoint(const std::string& uuid);
  // The experiment's stored config as it was created (its secrets in it: the master's own read,
  // for reading its checkpoints; never shown to a user). NotFound.
  Result<std::string> StoredConfig(int64_t experiment_id);
  // Replaces checkpoint `uuid`'s user metadata (Determined's PostCheckpointMetadata); the
  // checkpoint as it is then. NotFound for an unknown one.
  Result<std::pair<storage::CheckpointRecord, int64_t>> SetCheckpointMetadata(
      const std::string& uuid, const std::string& metadata_json);
  // Replaces the checkpoint's resources with what is left of it (Determined's PatchCheckpoints,
  // after trial code deleted files): none left makes it DELETED, some PARTIALLY_DELETED. NotFound
  // for a checkpoint outside the run's experiment.
  Status PatchCheckpoint(const TrialRun& run, const std::string& uuid,
                         const std::string& resources_json);
  // Determined's run metadata of the run's own trial (replaced whole), and any trial's.
  Status SetRunMetadata(const TrialRun& run, const std::string& metadata_json);
  Result<std::string> RunMetadata(int64_t trial_id);
  // Ends the allocation's task (its run failed: the trial counts a restart and runs again); logs
  // why, and when the registry did not take it.
  void KillAllocation(const std::string& allocation_id, const std::string& why);

 private:
  zmq::context_t& context_;
  storage::Database db_;
  AllocationTokens tokens_;
};

}  // namespace det::master

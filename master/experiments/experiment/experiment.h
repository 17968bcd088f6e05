#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "master/experiments/experiment/experiment_config.h"
#include "master/experiments/searcher/searcher.h"

namespace det::master::experiment {

// Experiment and trial states, as Determined names them. Trials use the same names except
// DELETING/DELETED.
inline constexpr std::string_view kActive = "ACTIVE";
inline constexpr std::string_view kPaused = "PAUSED";
inline constexpr std::string_view kStoppingCompleted = "STOPPING_COMPLETED";
inline constexpr std::string_view kStoppingCanceled = "STOPPING_CANCELED";
inline constexpr std::string_view kStoppingKilled = "STOPPING_KILLED";
inline constexpr std::string_view kStoppingError = "STOPPING_ERROR";
inline constexpr std::string_view kCompleted = "COMPLETED";
inline constexpr std::string_view kCanceled = "CANCELED";
inline constexpr std::string_view kError = "ERROR";
inline constexpr std::string_view kDeleting = "DELETING";
inline constexpr std::string_view kDeleteFailed = "DELETE_FAILED";  // delete may be asked again

bool IsTerminal(std::string_view state);

// A trial's early exit as the Core API and the saved search state name it: ERRORED, INVALID_HP,
// USER_CANCELED.
std::string_view ExitReasonName(searcher::ExitReason reason);
std::optional<searcher::ExitReason> ExitReasonNamed(std::string_view name);

// How a trial's run (one task) ended, as the task reports it.
struct RunEnd {
  int32_t exit_code = 0;
  std::string failure_type;  // bus::kFailure*; empty: exited 0
  std::string message;
};

struct Trial {
  int64_t id = 0;
  int64_t experiment_id = 0;
  int64_t request_id = 0;
  nlohmann::json hparams;
  uint32_t seed = 0;
  std::string state = std::string(kActive);
  int32_t restarts = 0;            // failures counted against max_restarts
  int32_t run_id = 0;              // runs started
  bool running = false;            // a run's task exists and has not ended
  bool searcher_stopped = false;   // the searcher has what it needs: the run should end
  bool stopped_for_pause = false;  // the run was asked to stop because the experiment paused
  std::optional<searcher::ExitReason> exited_early;
  int64_t steps_completed = 0;       // time_metric of the latest validation
  int64_t searcher_steps = 0;        // time_metric of the latest validation the searcher has seen
  nlohmann::json best_validation;    // null until one
  nlohmann::json latest_validation;  // the one at steps_completed; null until one
  std::string runner_state;  // what the run last said it was doing (Determined's set_status)
  std::string latest_checkpoint;
  // The batches latest_checkpoint was saved at: where a run that restores it starts counting
  // (Determined's steps_completed in trial.json); 0 for a warm start's checkpoint.
  int64_t latest_checkpoint_steps = 0;
  int64_t start_ns = 0;
  int64_t end_ns = 0;

  // The task of run `run_id`: "trial-<id>-<run>".
  std::string TaskId() const;
};

class Experiment;

// What the experiment asks of the world. Calls happen on the owner's thread, in order.
class ExperimentEffects {
 public:
  virtual ~ExperimentEffects() = default;
  // A new trial's id; the trial is stored with the next writes of TrialChanged and
  // ExperimentChanged, together with the search that asked for it.
  virtual Result<int64_t> CreateTrial(int64_t experiment_id, const Trial& trial) = 0;
  // Submits the trial's current run (trial.TaskId()).
  virtual void StartRun(const Trial& trial) = 0;
  // Ends the trial's current run: asked to stop (the Core API signal), then killed after a grace.
  virtual void StopRun(const Trial& trial) = 0;
  // The trial's state, restarts or run changed: store them.
  virtual void TrialChanged(const Trial& trial) = 0;
  // The experiment's state or its search changed: store them (Experiment::SaveState()).
  virtual void ExperimentChanged(const Experiment& experiment) = 0;
};

// One experiment: its state machine, its trials and its search.
//
// States: ACTIVE -> PAUSED -> ACTIVE; ACTIVE|PAUSED -> STOPPING_COMPLETED (the search is over),
// STOPPING_CANCELED (cancel), STOPPING_KILLED (kill), STOPPING_ERROR (every trial failed, or the
// search failed) -> COMPLETED | CANCELED | ERROR once no run is left. A trial's run that ends by
// a failure the cluster caused (its agent was lost) starts again without counting; any other
// failure counts a restart and starts again while restarts <= max_restarts, else the trial ends
// in ERROR. A finished experiment may be deleted: DELETING, then gone (or DELETE_FAILED, from which
// delete may be asked again). Pausing stops every run (trials PAUSED), activating starts them
// again: a run resumes from its trial's latest checkpoint (the trial code's part).
//
// Threading: not thread-safe; owned by the experiment service's thread.
class Experiment {
 public:
  Experiment(int64_t id, ExperimentConfig config, std::unique_ptr<searcher::Searcher> searcher,
             ExperimentEffects& effects);

  int64_t id() const { return id_; }
  const ExperimentConfig& config() const { return config_; }
  const std::string& state() const { return state_; }
  const std::string& message() const { return message_; }
  const std::map<int64_t, Trial>& trials() const { return trials_; }
  const Trial* FindTrial(int64_t trial_id) const;

  // A warm start (searcher.source_*): every trial created from now on starts from checkpoint
  // `uuid` (its latest_checkpoint until it writes one of its own). Before Start or Restore.
  void StartTrialsFrom(std::string uuid) { warm_start_checkpoint_ = std::move(uuid); }
  const std::string& warm_start_checkpoint() const { return warm_start_checkpoint_; }
  // A new experiment: asks the search for its first trials.
  Status Start(int64_t now_ns);
  // A restored one: its state and trials as stored; runs that were live are live again.
  void Restore(std::string state, std::vector<Trial> trials);

  // pause | activate | cancel | kill | delete: the state after it, or FailedPrecondition. Delete
  // only moves a finished experiment to DELETING: its owner removes the checkpoints and rows,
  // then calls DeleteFailed() or forgets the experiment.
  Result<std::string> Act(const std::string& action, int64_t now_ns);
  void DeleteFailed(const std::string& why);
  // Determined's ContinueExperiment. OK when this experiment may be continued (it is COMPLETED,
  // CANCELED or ERROR, with a single search), else FailedPrecondition saying why (Determined's
  // words for a finished multi-trial search whose trials all completed).
  Status CheckContinuable() const;
  // Continues it (CheckContinuable first) under `config` and `searcher`, its search with the
  // trial reopened (Searcher::ReopenSingleTrial): the experiment and its trial are ACTIVE again,
  // the trial with no restarts counted and no end, and a new run of it resumes from
  // `resume_from` (its latest checkpoint still stored; "" for none).
  // `resume_steps`: the steps resume_from was saved at (0 for a warm start's checkpoint).
  Status Continue(ExperimentConfig config, std::unique_ptr<searcher::Searcher> searcher,
                  std::string resume_from, int64_t resume_steps);
  // Kills one trial: the search is told it was canceled, its run (if any) is stopped and it ends
  // CANCELED. NotFound for a trial of another experiment, FailedPrecondition once it ended.
  Status KillTrial(int64_t trial_id, int64_t now_ns);

  // A validation of `trial_id` at `steps` (the time_metric in `metrics`); returns whether the
  // trial's run should stop.
  Status Validated(int64_t trial_id, int64_t steps, const nlohmann::json& metrics, int64_t now_ns);
  void CheckpointSaved(int64_t trial_id, const std::string& uuid, int64_t steps);
  // What the trial's run says it is doing ("training", "validating"): shown, never acted on.
  void RunnerStateReported(int64_t trial_id, std::string state);
  // Trial code said it cannot go on (errored, invalid hyperparameters, canceled).
  void ExitedEarly(int64_t trial_id, searcher::ExitReason reason, int64_t now_ns);
  // The trial's current run ended.
  void RunEnded(int64_t trial_id, const RunEnd& end, int64_t now_ns);

  // Why the trial's run should stop now; empty when it should go on.
  std::string StopReason(int64_t trial_id) const;

  // The search and the trials' searcher positions (steps, stopped, early exits, stopped for a
  // pause), for ExperimentChanged's caller to store.
  nlohmann::json SaveState() const;

 private:
  Status Apply(std::vector<searcher::Operation> operations, int64_t now_ns);
  // Whether a validation's time_metric reached max_time under a searcher with no rungs of its
  // own (single, random, grid): the trial has trained as long as it should.
  bool ReachedMaxTime(const nlohmann::json& metrics) const;
  Status CreateTrial(const searcher::Create& create, int64_t now_ns);
  void StartRun(Trial& trial);
  void SetTrialState(Trial& trial, std::string_view state, int64_t now_ns);
  void SetState(std::string_view state);
  // Closes the trial for the search (ended for good) and applies what follows.
  void CloseTrial(Trial& trial, std::string_view state, int64_t now_ns);
  // Ends the experiment once it is stopping and no run is left.
  void MaybeFinish(int64_t now_ns);
  void Stop(std::string_view stopping_state, int64_t now_ns);
  Trial* Find(int64_t trial_id);

  int64_t id_;
  ExperimentConfig config_;
  std::unique_ptr<searcher::Searcher> searcher_;
  ExperimentEffects& effects_;
  std::string state_ = std::string(kActive);
  std::string message_;
  std::map<int64_t, Trial> trials_;
  std::map<int64_t, int64_t> by_request_;  // request id -> trial id
  std::string warm_start_checkpoint_;
};

}  // namespace det::master::experiment

#include "master/experiments/experiment/experiment.h"

#include <algorithm>
#include <utility>

#include "bus/catalog/workload.h"

namespace det::master::experiment {
namespace {

bool IsStopping(std::string_view state) { return state.starts_with("STOPPING_"); }

// STOPPING_X -> the state the experiment ends in.
std::string_view EndStateOf(std::string_view stopping) {
  if (stopping == kStoppingCompleted) return kCompleted;
  if (stopping == kStoppingError) return kError;
  return kCanceled;
}

std::string_view TrialEndStateOf(searcher::ExitReason reason) {
  return reason == searcher::ExitReason::kUserCanceled ? kCanceled : kError;
}

}  // namespace

bool IsTerminal(std::string_view state) {
  return state == kCompleted || state == kCanceled || state == kError || state == kDeleting ||
         state == kDeleteFailed;
}

std::string_view ExitReasonName(searcher::ExitReason reason) {
  switch (reason) {
    case searcher::ExitReason::kErrored:
      return "ERRORED";
    case searcher::ExitReason::kInvalidHyperparameters:
      return "INVALID_HP";
    case searcher::ExitReason::kUserCanceled:
      return "USER_CANCELED";
  }
  return "ERRORED";
}

std::optional<searcher::ExitReason> ExitReasonNamed(std::string_view name) {
  for (auto reason : {searcher::ExitReason::kErrored, searcher::ExitReason::kInvalidHyperparameters,
                      searcher::ExitReason::kUserCanceled}) {
    if (ExitReasonName(reason) == name) return reason;
  }
  return std::nullopt;
}

std::string Trial::TaskId() const {
  return "trial-" + std::to_string(id) + "-" + std::to_string(run_id);
}

Experiment::Experiment(int64_t id, ExperimentConfig config,
                       std::unique_ptr<searcher::Searcher> searcher, ExperimentEffects& effects)
    : id_(id), config_(std::move(config)), searcher_(std::move(searcher)), effects_(effects) {}

const Trial* Experiment::FindTrial(int64_t trial_id) const {
  auto it = trials_.find(trial_id);
  return it == trials_.end() ? nullptr : &it->second;
}

Trial* Experiment::Find(int64_t trial_id) {
  auto it = trials_.find(trial_id);
  return it == trials_.end() ? nullptr : &it->second;
}

Status Experiment::Start(int64_t now_ns) {
  Status applied = Apply(searcher_->Start(), now_ns);
  effects_.ExperimentChanged(*this);
  return applied;
}

void Experiment::Restore(std::string state, std::vector<Trial> trials) {
  state_ = std::move(state);
  for (Trial& trial : trials) {
    by_request_[trial.request_id] = trial.id;
    trials_[trial.id] = std::move(trial);
  }
}

Status Experiment::Apply(std::vector<searcher::Operation> operations, int64_t now_ns) {
  for (searcher::Operation& operation : operations) {
    if (auto* create = std::get_if<searcher::Create>(&operation)) {
      DET_RETURN_IF_ERROR(CreateTrial(*create, now_ns));
    } else if (auto* stop = std::get_if<searcher::Stop>(&operation)) {
      auto it = by_request_.find(stop->request_id);
      if (it == by_request_.end()) continue;
      Trial& trial = trials_.at(it->second);
      if (IsTerminal(trial.state)) continue;
      trial.searcher_stopped = true;
      if (trial.running) {
        effects_.StopRun(trial);
      } else {
        CloseTrial(trial, kCompleted, now_ns);
      }
    } else {
      const auto& shutdown = std::get<searcher::Shutdown>(operation);
      if (shutdown.failure) message_ = "every trial failed";
      Stop(shutdown.failure  ? kStoppingError
           : shutdown.cancel ? kStoppingCanceled
                             : kStoppingCompleted,
           now_ns);
    }
  }
  return Status::Ok();
}

Status Experiment::CreateTrial(const searcher::Create& create, int64_t now_ns) {
  Trial trial;
  trial.experiment_id = id_;
  trial.request_id = create.request_id;
  trial.hparams = create.hparams;
  trial.seed = create.trial_seed;
  trial.latest_checkpoint = warm_start_checkpoint_;
  trial.state = std::string(state_ == kActive ? kActive : kPaused);
  trial.start_ns = now_ns;
  DET_ASSIGN_OR_RETURN(trial.id, effects_.CreateTrial(id_, trial));
  by_request_[trial.request_id] = trial.id;
  Trial& stored = trials_[trial.id] = std::move(trial);
  if (stored.state == kActive) StartRun(stored);
  return Apply(searcher_->TrialCreated(create.request_id), now_ns);
}

void Experiment::StartRun(Trial& trial) {
  ++trial.run_id;
  trial.running = true;
  effects_.TrialChanged(trial);
  effects_.StartRun(trial);
}

void Experiment::SetTrialState(Trial& trial, std::string_view state, int64_t now_ns) {
  trial.state = std::string(state);
  if (IsTerminal(state)) trial.end_ns = now_ns;
  effects_.TrialChanged(trial);
}

void Experiment::SetState(std::string_view state) {
  state_ = std::string(state);
  effects_.ExperimentChanged(*this);
}

Result<std::string> Experiment::Act(const std::string& action, int64_t now_ns) {
  auto refuse = [&] {
    return FailedPrecondition("cannot " + action + " experiment " + std::to_string(id_) +
                              ": it is " + state_);
  };
  if (action == "pause") {
    if (state_ == kPaused) return state_;
    if (state_ != kActive) return refuse();
    SetState(kPaused);
    for (auto& [id, trial] : trials_) {
      if (trial.state != kActive) continue;
      SetTrialState(trial, kPaused, now_ns);
      if (trial.running) {
        trial.stopped_for_pause = true;
        effects_.StopRun(trial);
      }
    }
    return state_;
  }
  if (action == "activate") {
    if (state_ == kActive) return state_;
    if (state_ != kPaused) return refuse();
    SetState(kActive);
    for (auto& [id, trial] : trials_) {
      if (trial.state != kPaused) continue;
      SetTrialState(trial, kActive, now_ns);
      if (!trial.running) {
        StartRun(trial);
      } else {
        // Still finishing its pause (it may have been given time to checkpoint): stopped now; the
        // trial starts again when it has ended.
        effects_.StopRun(trial);
      }
    }
    return state_;
  }
  if (action == "cancel" || action == "kill") {
    const std::string_view stopping = action == "cancel" ? kStoppingCanceled : kStoppingKilled;
    if (state_ == stopping) return state_;
    if (IsTerminal(state_) || IsStopping(state_)) return refuse();
    Stop(stopping, now_ns);
    return state_;
  }
  if (action == "delete") {
    if (state_ == kDeleting) return state_;
    if (!IsTerminal(state_)) {
      return FailedPrecondition("cannot delete experiment " + std::to_string(id_) + ": it is " +
                                state_ + "; cancel or kill it first");
    }
    message_.clear();
    SetState(kDeleting);
    return state_;
  }
  return InvalidArgument("unknown action " + action +
                         ": expected pause, activate, cancel, kill or delete");
}

Status Experiment::CheckContinuable() const {
  const std::string name = "experiment " + std::to_string(id_);
  if (state_ != kCompleted && state_ != kCanceled && state_ != kError) {
    return FailedPrecondition("cannot continue " + name + ": it is " + state_ +
                              "; only a COMPLETED, CANCELED or ERROR one can be continued");
  }
  if (config_.searcher.name == "single" && trials_.size() == 1) return Status::Ok();
  const bool all_completed = std::all_of(trials_.begin(), trials_.end(), [](const auto& entry) {
    return entry.second.state == kCompleted;
  });
  if (state_ == kCompleted && all_completed) {
    return FailedPrecondition("experiment has been completed, cannot continue this experiment");
  }
  return FailedPrecondition("cannot continue " + name +
                            ": continue trains a single-searcher "
                            "experiment's trial again, and this one's searcher is " +
                            config_.searcher.name +
                            "; start a new experiment from its trials' checkpoints with "
                            "searcher.source_trial_id");
}

Status Experiment::Continue(ExperimentConfig config, std::unique_ptr<searcher::Searcher> searcher,
                            std::string resume_from, int64_t resume_steps) {
  DET_RETURN_IF_ERROR(CheckContinuable());
  config_ = std::move(config);
  searcher_ = std::move(searcher);
  message_.clear();
  SetState(kActive);
  Trial& trial = trials_.begin()->second;
  trial.restarts = 0;
  trial.end_ns = 0;
  trial.exited_early.reset();
  trial.searcher_stopped = false;
  trial.stopped_for_pause = false;
  trial.state = std::string(kActive);
  trial.latest_checkpoint = std::move(resume_from);
  trial.latest_checkpoint_steps = resume_steps;
  StartRun(trial);
  return Status::Ok();
}

Status Experiment::KillTrial(int64_t trial_id, int64_t now_ns) {
  Trial* trial = Find(trial_id);
  if (!trial) return NotFound("trial " + std::to_string(trial_id) + " not found");
  if (IsTerminal(trial->state)) {
    return FailedPrecondition("cannot kill trial " + std::to_string(trial_id) + ": it is " +
                              trial->state);
  }
  ExitedEarly(trial_id, searcher::ExitReason::kUserCanceled, now_ns);
  if (trial->running) {
    effects_.StopRun(*trial);  // RunEnded closes it CANCELED
  } else {
    CloseTrial(*trial, kCanceled, now_ns);
  }
  return Status::Ok();
}

void Experiment::DeleteFailed(const std::string& why) {
  message_ = "delete failed: " + why;
  SetState(kDeleteFailed);
}

void Experiment::Stop(std::string_view stopping_state, int64_t now_ns) {
  SetState(stopping_state);
  for (auto& [id, trial] : trials_) {
    if (IsTerminal(trial.state)) continue;
    if (trial.running) {
      effects_.StopRun(trial);
    } else {
      SetTrialState(trial, kCanceled, now_ns);
    }
  }
  MaybeFinish(now_ns);
}

void Experiment::MaybeFinish(int64_t now_ns) {
  if (!IsStopping(state_)) return;
  for (const auto& [id, trial] : trials_) {
    if (trial.running) return;
  }
  for (auto& [id, trial] : trials_) {
    if (!IsTerminal(trial.state)) SetTrialState(trial, kCanceled, now_ns);
  }
  SetState(EndStateOf(state_));
}

Status Experiment::Validated(int64_t trial_id, int64_t steps, const nlohmann::json& metrics,
                             int64_t now_ns) {
  Trial* trial = Find(trial_id);
  if (!trial) return NotFound("trial " + std::to_string(trial_id) + " not found");
  const std::string& metric = config_.searcher.metric;
  if (!metrics.contains(metric) || !metrics[metric].is_number()) {
    return InvalidArgument("metrics: a validation must carry the searcher's metric \"" + metric +
                           "\" as a number");
  }
  if (steps >= trial->steps_completed) trial->latest_validation = metrics;
  trial->steps_completed = std::max(trial->steps_completed, steps);
  {
    const double value = metrics[metric].get<double>();
    const bool better =
        trial->best_validation.is_null() ||
        (config_.searcher.smaller_is_better ? value < trial->best_validation[metric].get<double>()
                                            : value > trial->best_validation[metric].get<double>());
    if (better) trial->best_validation = metrics;
  }
  // A validation sent again, or one after the search let the trial go, is not news to it.
  if (steps <= trial->searcher_steps || IsTerminal(trial->state) || IsStopping(state_) ||
      IsTerminal(state_)) {
    return Status::Ok();
  }
  DET_ASSIGN_OR_RETURN(auto operations, searcher_->ValidationCompleted(trial->request_id, metrics));
  if (ReachedMaxTime(metrics)) operations.emplace_back(searcher::Stop{trial->request_id});
  trial->searcher_steps = steps;
  Status applied = Apply(std::move(operations), now_ns);
  effects_.ExperimentChanged(*this);
  return applied;
}

bool Experiment::ReachedMaxTime(const nlohmann::json& metrics) const {
  const searcher::SearcherConfig& searcher = config_.searcher;
  if (searcher.max_time == 0 || searcher.name == "adaptive_asha" ||
      searcher.name == "async_halving") {
    return false;  // ASHA stops its trials at its rungs, the top one at max_time
  }
  const auto time = metrics.find(searcher.time_metric);
  return time != metrics.end() && time->is_number() &&
         time->get<double>() >= static_cast<double>(searcher.max_time);
}

void Experiment::CheckpointSaved(int64_t trial_id, const std::string& uuid, int64_t steps) {
  if (Trial* trial = Find(trial_id)) {
    trial->latest_checkpoint = uuid;
    trial->latest_checkpoint_steps = steps;
    effects_.TrialChanged(*trial);
  }
}

void Experiment::RunnerStateReported(int64_t trial_id, std::string state) {
  if (Trial* trial = Find(trial_id)) trial->runner_state = std::move(state);
}

void Experiment::ExitedEarly(int64_t trial_id, searcher::ExitReason reason, int64_t now_ns) {
  Trial* trial = Find(trial_id);
  if (!trial || trial->exited_early || IsTerminal(trial->state)) return;
  trial->exited_early = reason;
  if (IsStopping(state_) || IsTerminal(state_)) return;
  (void)Apply(searcher_->TrialExitedEarly(trial->request_id, reason), now_ns);
  effects_.ExperimentChanged(*this);
}

void Experiment::RunEnded(int64_t trial_id, const RunEnd& end, int64_t now_ns) {
  Trial* found = Find(trial_id);
  if (!found || !found->running) return;
  Trial& trial = *found;
  trial.running = false;
  if (IsTerminal(trial.state)) return MaybeFinish(now_ns);
  if (state_ == kStoppingCanceled || state_ == kStoppingKilled) {
    SetTrialState(trial, kCanceled, now_ns);
    return MaybeFinish(now_ns);
  }
  if (trial.exited_early) return CloseTrial(trial, TrialEndStateOf(*trial.exited_early), now_ns);
  if (trial.searcher_stopped) return CloseTrial(trial, kCompleted, now_ns);
  if (std::exchange(trial.stopped_for_pause, false)) {                        // however it ended
    if (trial.state == kActive && state_ == kActive) return StartRun(trial);  // reactivated
    effects_.TrialChanged(trial);
    return;
  }
  // Without a searcher length a run that exits 0 is the trial's completion (Determined 0.38's
  // single, random and grid). With one, a run of an active experiment that exits 0 before its
  // trial validated at max_time ended too soon (its process was stopped by someone else, or the
  // script returned early): that is not the trial's completion. Like a crash it counts against
  // max_restarts and the trial resumes from its latest checkpoint: a metric series with a hole is
  // never called complete.
  const bool reached_length =
      config_.searcher.max_time == 0 || trial.steps_completed >= config_.searcher.max_time;
  if (end.failure_type.empty() && (reached_length || state_ != kActive)) {
    return CloseTrial(trial, kCompleted, now_ns);
  }
  if (end.failure_type != bus::kFailureAgentFailed) ++trial.restarts;
  if (trial.restarts > config_.max_restarts) {
    (void)Apply(searcher_->TrialExitedEarly(trial.request_id, searcher::ExitReason::kErrored),
                now_ns);
    return CloseTrial(trial, kError, now_ns);
  }
  if (state_ == kActive) {
    StartRun(trial);
  } else {
    effects_.TrialChanged(trial);
  }
}

void Experiment::CloseTrial(Trial& trial, std::string_view state, int64_t now_ns) {
  SetTrialState(trial, state, now_ns);
  if (!IsStopping(state_) && !IsTerminal(state_)) {
    (void)Apply(searcher_->TrialClosed(trial.request_id), now_ns);
    effects_.ExperimentChanged(*this);
  }
  MaybeFinish(now_ns);
}

std::string Experiment::StopReason(int64_t trial_id) const {
  const Trial* trial = FindTrial(trial_id);
  if (!trial) return "the trial is not part of this experiment";
  if (!trial->running) return "";
  if (state_ == kStoppingCanceled) return "the experiment was canceled";
  if (state_ == kStoppingKilled) return "the experiment was killed";
  if (trial->state == kPaused || trial->stopped_for_pause) return "the experiment was paused";
  if (trial->searcher_stopped) return "the searcher has what it needs from this trial";
  if (trial->exited_early) return "the trial was stopped";
  if (IsTerminal(trial->state)) return "the trial is over";
  return "";
}

nlohmann::json Experiment::SaveState() const {
  nlohmann::json steps = nlohmann::json::object();
  for (const auto& [id, trial] : trials_) {
    nlohmann::json& saved = steps[std::to_string(id)];
    saved = {{"searcher_steps", trial.searcher_steps},
             {"searcher_stopped", trial.searcher_stopped}};
    if (trial.exited_early) saved["exited_early"] = ExitReasonName(*trial.exited_early);
    if (trial.stopped_for_pause) saved["stopped_for_pause"] = true;
  }
  return {{"searcher", searcher_->Save()}, {"trials", steps}};
}

}  // namespace det::master::experiment

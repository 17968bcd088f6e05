#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "bus/catalog/experiments.h"
#include "bus/catalog/tasks.h"
#include "bus/event_subscriber.h"
#include "bus/rpc_client.h"
#include "bus/rpc_server.h"
#include "master/experiments/checkpoint_collector.h"
#include "master/experiments/experiment/experiment.h"
#include "master/experiments/experiment_records.h"
#include "master/experiments/experiments_endpoint.h"
#include "master/experiments/trial_launch.h"
#include "storage/experiments_repo.h"

namespace det::master {

// The experiment service: experiments, their trials and searches (experiment::Experiment), and
// what the Core API tells about trial runs.
//
// Desired state: every unfinished experiment stored in PostgreSQL is in memory and moving: each
// trial that should run has a task in the agent registry, each run that ended has been accounted
// for (restart, close, pause). Checkpoints the experiment's save_* policy does not keep are
// removed as its trials end (CheckpointCollector); a deleted experiment's go with it. Actual state:
// the registry's tasks, read every `poll_interval` for the runs this service started.
//
// Durability: what one request or one turn of the loop changes (trials' states and runs, the
// experiment's state and its search) reaches its records (experiment_records.h: PostgreSQL, in one
// transaction) before the
// service answers or acts on other components (submits, stops): a master killed at any moment
// leaves trials and the search that decided about them in agreement, and no run was submitted
// that the database does not know. (This actor is not the scheduler's loop; its writes are a few
// rows per trial event.)
//
// Threading: an actor. Start() runs it on its own thread; the CLI gateway and the Core API reach
// it over its inproc endpoint (kEndpoint).
class ExperimentService : private experiment::ExperimentEffects {
 public:
  static constexpr const char* kEndpoint = kExperimentsEndpoint;

  // `events`: the master's event bus, whose task.state events say when a run ended. `records`
  // outlive the service. Runs are submitted to the agent registry at AgentRegistry::kQueryEndpoint
  // in `context`.
  ExperimentService(zmq::context_t& context, const Clock& clock, ExperimentRecords& records,
                    TrialLaunchOptions launch, bus::EventBrokerEndpoints events);
  ~ExperimentService() override;

  Status Bind();
  // Before Start(): the experiments a previous master left, as they stood; unfinished ones go on
  // (validations stored but not yet seen by their search are given to it).
  Status Restore();
  void Start();
  void Stop();

 private:
  void Run();
  // A task's state as the registry reports it (a task.state event or a listing).
  void OnTaskState(const bus::TaskSummary& task);
  void FollowTaskEvents();
  // Whom the runs of the owner's trials run as: their link, else security.default_task.
  Result<std::optional<bus::AgentUserGroup>> RunAs(int64_t owner_id);
  void HandleRequests();
  Status RestoreOne(const storage::ExperimentRecord& record);
  Result<bus::ExperimentCreateReply> Create(const bus::ExperimentCreateRequest& request);
  Result<bus::ExperimentActionReply> Act(const bus::ExperimentActionRequest& request);
  Result<bus::ExperimentContinueReply> Continue(const bus::ExperimentContinueRequest& request);
  // Newest first, filtered, then paged.
  Result<bus::ExperimentList> List(const bus::ExperimentListRequest& request);
  Result<bus::TrialSignal> Report(const bus::TrialReport& report);
  Result<bus::TrialGetReply> KillTrial(int64_t trial_id);
  Result<bus::CheckpointDeleteReply> DeleteCheckpoints(const bus::CheckpointDeleteRequest& request);
  // The checkpoint a warm start (searcher.source_checkpoint_uuid or source_trial_id) begins from
  // ("" for none); InvalidArgument naming the field when there is no such checkpoint.
  Result<std::string> WarmStartOf(const searcher::SearcherConfig& searcher);
  // `change()`'s result, answered once what it changed is committed (Unavailable when the records
  // are out of reach: the change is kept and stored at a later turn).
  template <typename Change>
  auto Committed(Change&& change) {
    auto result = change();
    Status committed = Commit();
    if (result.ok() && !committed.ok()) {
      return decltype(result)(committed.WithContext("accepted but not stored yet"));
    }
    return result;
  }
  // Accounts for ended runs, stores every new and changed trial and experiment together
  // (ExperimentRecords::Store), then runs what waited for it (submits, stops), until nothing is
  // left. Unavailable (everything kept for the next call, nothing acted on) when the records are
  // out of reach.
  Status Commit();
  ExperimentChanges Unsaved() const;
  std::optional<TrialRow> TrialRowOf(int64_t experiment_id, int64_t trial_id) const;
  std::optional<ExperimentRow> ExperimentRowOf(int64_t id) const;
  Result<bus::TrialSignal> Signal(const std::string& allocation_id);
  bus::ExperimentSummary Summary(const experiment::Experiment& experiment) const;
  bus::TrialSummary TrialSummaryOf(const experiment::Trial& trial) const;
  struct LiveRun;
  // The live run `allocation_id` belongs to, with its experiment and trial.
  struct RunRef {
    experiment::Experiment* experiment;
    const experiment::Trial* trial;
    const LiveRun* live;
  };
  Result<RunRef> RunOf(const std::string& allocation_id);
  experiment::Experiment* Find(int64_t experiment_id);
  // Reads the registry's view of every live run; ended runs are accounted for.
  void PollRuns();
  void FinishEndedRuns();
  // Checkpoint collection for the experiments whose trials ended since the last call; finished
  // deletions leave the service (or fail).
  void CollectCheckpoints();
  int64_t NowNs() const { return UnixNanos(clock_.WallNow()); }

  experiment::ExperimentEffects& Effects() { return *this; }
  // ExperimentEffects
  Result<int64_t> CreateTrial(int64_t experiment_id, const experiment::Trial& trial) override;
  void StartRun(const experiment::Trial& trial) override;
  void StopRun(const experiment::Trial& trial) override;
  // StartRun's and StopRun's calls to the registry, made after the commit.
  void SubmitRun(const experiment::Trial& trial);
  void StopRunNow(const experiment::Trial& trial);
  void TrialChanged(const experiment::Trial& trial) override;
  void ExperimentChanged(const experiment::Experiment& experiment) override;

  struct Entry {
    std::unique_ptr<experiment::Experiment> experiment;
    std::string config_yaml;
    std::string config_json;  // the same as JSON (what Determined's API answers as `config`)
    int64_t start_ns = 0;
    int64_t end_ns = 0;
    int64_t owner_id = 0;
    std::string owner;
  };
  struct LiveRun {
    int64_t experiment_id = 0;
    int64_t trial_id = 0;
    std::string task_state;
    bool preempting = false;
    std::string preempt_reason;  // the task's message while preempting (who asked, and why)
    // Until when the run counts as listening for the preemption signal (its long poll was in the
    // board's last batches); and when it is sent SIGTERM if it has not exited by itself.
    MonoTime listening_until{};
    std::optional<MonoTime> kill_at;
  };
  // The run's task starts its next allocation (after a preemption) from `checkpoint`.
  void ResumeFrom(const std::string& task_id, const std::string& checkpoint, int64_t steps);
  // SIGTERM to the run's task (SIGKILL after the kill's grace).
  void KillRun(const std::string& task_id, int64_t trial_id);
  // The deferred kills whose time has come.
  void KillOverdueRuns();
  struct EndedRun {
    int64_t experiment_id = 0;
    int64_t trial_id = 0;
    experiment::RunEnd end;
  };

  const Clock& clock_;
  ExperimentRecords& records_;
  TrialLaunchOptions launch_;
  bus::RpcServer server_;
  bus::RpcClient registry_;
  std::map<int64_t, Entry> experiments_;
  std::map<std::string, LiveRun> runs_;  // by task id
  // Runs to kill at Run() (task ids): paused trials', and those a previous master was killing.
  std::vector<std::string> stop_after_restore_;
  std::vector<EndedRun> ended_;  // to account for once the current call is done
  std::set<std::pair<int64_t, int64_t>> new_trials_;      // (experiment, trial): rows to insert
  std::set<std::pair<int64_t, int64_t>> unsaved_trials_;  // (experiment, trial), for Commit()
  std::set<int64_t> unsaved_experiments_;
  std::set<int64_t> continued_;  // their rows carry the new config (and clear the end time)
  std::vector<std::function<void()>> after_commit_;  // registry calls, in order
  CheckpointCollector collector_{
      registry_, records_,
      [this](int64_t experiment_id) {
        auto entry = experiments_.find(experiment_id);
        return RunAs(entry == experiments_.end() ? 0 : entry->second.owner_id);
      },
      launch_.cluster_id};
  std::set<int64_t> to_collect_;  // experiments with a trial that ended since the last collection
  // Runs learn their tasks' states from task.state events; after a resync of the event stream (and
  // at the first turn) the registry is asked once for all of them.
  bus::EventSubscriber tasks_;
  bool reconcile_ = true;
  static constexpr Duration kReconcileEvery = std::chrono::seconds(30);
  MonoTime next_reconcile_{};
  Duration collect_interval_ = std::chrono::milliseconds(500);  // checkpoint GC outcomes
  MonoTime next_collect_{};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace det::master

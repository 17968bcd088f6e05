#pragma once

#include <span>
#include <string>
#include <vector>

#include "bus/catalog/autoscaler.h"
#include "bus/catalog/experiments.h"
#include "bus/catalog/tasks.h"
#include "master/auth/users.h"
#include "storage/database.h"
#include "storage/experiments_repo.h"
#include "storage/metrics_repo.h"

namespace det::master {

// A stored checkpoint as the catalog summarizes it (its size: the sum of its resources').
bus::CheckpointSummary CheckpointSummaryOf(const storage::CheckpointRecord& checkpoint,
                                           int64_t experiment_id);

// What the gateways read from PostgreSQL themselves rather than ask an actor: task logs, an
// experiment's checkpoints, a trial's metrics, many trials' curves at once, the autoscaler's
// instances and decisions. Each read is one transaction on the database's pool; unknown
// experiments, trials and tasks are NotFound, bad limits InvalidArgument naming the field.
//
// Thread-safe: any thread may call (the gateways' worker threads); each call blocks on
// PostgreSQL.
class RecordReads {
 public:
  // `database` outlives the reads.
  explicit RecordReads(storage::Database& database) : database_(database) {}

  Result<bus::TaskLogsReply> TaskLogs(const auth::Principal& caller,
                                      const bus::TaskLogsRequest& request);
  // An experiment's checkpoints; NotFound for an unknown experiment.
  Result<bus::CheckpointList> Checkpoints(const auth::Principal& caller,
                                          const bus::ExperimentCheckpointsRequest& request);
  // Each experiment's checkpoint_count and checkpoint_bytes (Determined's checkpointCount and
  // checkpointSize: storage::ExperimentCheckpointTotals), filled in one read. When PostgreSQL
  // does not answer they stay 0 and that is logged: the experiments (from the experiment
  // service's memory) are answered anyway.
  void FillCheckpointTotals(std::span<bus::ExperimentSummary> experiments);
  // An experiment's model definition (a gzipped tar; "" when it was made without one); NotFound
  // for an unknown experiment.
  Result<std::string> ModelDefinition(const auth::Principal& caller, int64_t experiment_id);
  // A trial's reports of `kind` after `after_step` by step with their times, at most `limit`
  // (GetTrialWorkloads, GetMetrics); NotFound for an unknown trial.
  Result<std::vector<bus::TrialMetric>> MetricReports(const auth::Principal& caller,
                                                      int64_t trial_id, const std::string& kind,
                                                      int64_t after_step = -1, int limit = 10000);
  // A trial's metrics by step; NotFound for an unknown trial.
  Result<bus::TrialMetricsReply> TrialMetrics(const auth::Principal& caller,
                                              const bus::TrialMetricsRequest& request);
  // Curves of a few named metrics of many trials at once, for charts that overlay them
  // (storage::ReadMetricSeries): all of an experiment's trials (NotFound for an unknown
  // experiment), or the trials listed (NotFound for an unknown one), with the metric names
  // their latest points offer.
  struct MetricSeriesQuery {
    int64_t experiment_id = 0;  // not 0: its trials (NotFound when unknown); 0: trial_ids
    std::vector<int64_t> trial_ids;
    std::string kind = "validation";
    std::vector<std::string> names;  // none: only the names are read
    int max_points = 200;
    bool with_names = true;   // read the names the trials offer
    bool with_times = false;  // and when each point was reported (storage::FillReportTimes)
  };
  static constexpr size_t kMaxSeriesTrials = 5000;
  static constexpr size_t kMaxSeriesNames = 16;
  struct MetricSeriesAnswer {
    std::vector<int64_t> trial_ids;  // the trials read, by id
    bool truncated = false;          // the experiment has more than kMaxSeriesTrials trials
    storage::MetricNames names;
    std::vector<storage::MetricSeries> series;
  };
  Result<MetricSeriesAnswer> MetricSeries(const auth::Principal& caller,
                                          const MetricSeriesQuery& query);
  // The autoscaler's instances and decisions, as the master stored them.
  Result<bus::InstanceList> Instances(const auth::Principal& caller,
                                      const bus::InstanceListRequest& request);
  Result<bus::ScalingDecisionList> ScalingDecisions(const auth::Principal& caller,
                                                    const bus::ScalingDecisionListRequest& request);

 private:
  storage::Database& database_;
};

}  // namespace det::master

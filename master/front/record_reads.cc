#include "master/front/record_reads.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "master/experiments/trial_reports.h"
#include "master/records/autoscaler_records.h"
#include "storage/cloud_repo.h"
#include "storage/experiments_repo.h"
#include "storage/logs_repo.h"
#include "storage/metrics_repo.h"
#include "storage/tasks_repo.h"

namespace det::master {

namespace {

// The total of a checkpoint's files ({"name": bytes, ...}); 0 when unreadable.
int64_t SizeOf(const std::string& resources_json) {
  const auto resources = nlohmann::json::parse(resources_json, nullptr, false);
  int64_t total = 0;
  if (!resources.is_object()) return 0;
  for (const auto& [name, size] : resources.items()) {
    if (size.is_number_integer()) total += size.get<int64_t>();
  }
  return total;
}

}  // namespace

bus::CheckpointSummary CheckpointSummaryOf(const storage::CheckpointRecord& c,
                                           int64_t experiment_id) {
  return {c.uuid,        c.trial_id,    c.steps_completed, c.state,        SizeOf(c.resources_json),
          c.reported_ns, experiment_id, c.resources_json,  c.metadata_json};
}

Result<bus::TaskLogsReply> RecordReads::TaskLogs(const auth::Principal&,
                                                 const bus::TaskLogsRequest& request) {
  bus::TaskLogsReply reply;
  if (request.tail < 0 || request.since < 0 || request.until < 0) {
    return InvalidArgument("tail, since and until must not be negative");
  }
  Status read = database_.Run([&](pqxx::work& tx) -> Status {
    int limit = std::clamp(request.limit, 1, 10000);
    reply = bus::TaskLogsReply{};
    auto task = storage::GetTask(tx, request.task_id);
    if (!task.ok()) return task.status();
    // The end is stored after the task's last log batch (Store keeps order), so a task that has
    // ended has all its lines stored.
    reply.task_ended = task->end_ns.has_value();
    storage::LogQuery query{request.after_id};
    if (request.since > 0) query.since_ns = request.since;
    if (request.until > 0) query.until_ns = request.until;
    if (request.tail > 0) {
      query.after_id = 0;
      DET_ASSIGN_OR_RETURN(storage::TailStart start,
                           storage::TaskLogTailStart(tx, request.task_id, query, request.tail));
      query.after_id = reply.start_after_id = start.after_id;
      reply.tail_lines = start.lines;
      limit = static_cast<int>(std::min<int64_t>(limit, start.lines));
      if (limit == 0) return Status::Ok();
    }
    if (request.chunks) {
      DET_ASSIGN_OR_RETURN(auto chunks,
                           storage::ReadTaskLogChunks(tx, request.task_id, query, limit));
      for (auto& chunk : chunks) {
        reply.chunks.push_back({chunk.id, std::move(chunk.agent_id),
                                static_cast<int32_t>(chunk.codec), std::move(chunk.data),
                                chunk.line_count});
      }
      return Status::Ok();
    }
    DET_ASSIGN_OR_RETURN(auto lines, storage::ReadTaskLogs(tx, request.task_id, query, limit));
    for (auto& stored : lines) {
      reply.lines.push_back({stored.id, stored.line.timestamp_ns, std::move(stored.line.agent_id),
                             std::move(stored.line.stdtype), std::move(stored.line.log)});
    }
    return Status::Ok();
  });
  if (!read.ok()) return read;
  return reply;
}

Result<bus::CheckpointList> RecordReads::Checkpoints(
    const auth::Principal&, const bus::ExperimentCheckpointsRequest& request) {
  bus::CheckpointList reply;
  DET_RETURN_IF_ERROR(database_.Run([&](pqxx::work& tx) -> Status {
    reply.checkpoints.clear();
    DET_RETURN_IF_ERROR(storage::GetExperiment(tx, request.id).status());
    for (const auto& trial : storage::ListTrials(tx, request.id)) {
      for (const auto& c : storage::ListCheckpoints(tx, trial.id)) {
        reply.checkpoints.push_back(CheckpointSummaryOf(c, request.id));
      }
    }
    return Status::Ok();
  }));
  return reply;
}

void RecordReads::FillCheckpointTotals(std::span<bus::ExperimentSummary> experiments) {
  if (experiments.empty()) return;
  std::vector<int64_t> ids;
  for (const auto& experiment : experiments) ids.push_back(experiment.id);
  std::map<int64_t, storage::CheckpointTotals> totals;
  const Status read = database_.Run([&](pqxx::work& tx) {
    totals = storage::ExperimentCheckpointTotals(tx, ids);
    return Status::Ok();
  });
  if (!read.ok()) spdlog::warn("experiments' checkpoint totals not read: {}", read.message());
  for (auto& experiment : experiments) {
    const storage::CheckpointTotals found =
        totals.count(experiment.id) ? totals.at(experiment.id) : storage::CheckpointTotals{};
    experiment.checkpoint_count = found.count;
    experiment.checkpoint_bytes = found.bytes;
  }
}

Result<std::vector<bus::TrialMetric>> RecordReads::MetricReports(const auth::Principal&,
                                                                 int64_t trial_id,
                                                                 const std::string& kind,
                                                                 int64_t after_step, int limit) {
  DET_RETURN_IF_ERROR(CheckMetricGroup(kind, "kind"));
  std::vector<bus::TrialMetric> reports;
  DET_RETURN_IF_ERROR(database_.Run([&](pqxx::work& tx) -> Status {
    reports.clear();
    DET_RETURN_IF_ERROR(storage::GetTrial(tx, trial_id).status());
    for (const auto& point : storage::ReadMetrics(tx, trial_id, kind, after_step, limit)) {
      reports.push_back({point.step, point.run_id, point.metrics_json, point.reported_ns});
    }
    return Status::Ok();
  }));
  return reports;
}

Result<std::string> RecordReads::ModelDefinition(const auth::Principal&, int64_t experiment_id) {
  std::string archive;
  DET_RETURN_IF_ERROR(database_.Run([&](pqxx::work& tx) -> Status {
    DET_ASSIGN_OR_RETURN(std::optional<std::string> stored,
                         storage::GetModelDefinition(tx, experiment_id));
    archive = stored.value_or("");
    return Status::Ok();
  }));
  return archive;
}

Result<bus::TrialMetricsReply> RecordReads::TrialMetrics(const auth::Principal&,
                                                         const bus::TrialMetricsRequest& request) {
  DET_RETURN_IF_ERROR(CheckMetricGroup(request.kind, "kind"));
  if (request.limit < 1 || request.limit > 10000) {
    return InvalidArgument("limit: " + std::to_string(request.limit) + " is outside 1..10000");
  }
  if (request.max_points != 0 &&
      (request.max_points < 2 || request.max_points > storage::kMetricCurveMaxPoints)) {
    return InvalidArgument("max_points: " + std::to_string(request.max_points) + " is outside 2.." +
                           std::to_string(storage::kMetricCurveMaxPoints));
  }
  bus::TrialMetricsReply reply;
  DET_RETURN_IF_ERROR(database_.Run([&](pqxx::work& tx) -> Status {
    reply.metrics.clear();
    DET_RETURN_IF_ERROR(storage::GetTrial(tx, request.trial_id).status());
    storage::MetricCurve curve;
    if (request.max_points > 0) {
      DET_ASSIGN_OR_RETURN(curve, storage::ReadMetricCurve(tx, request.trial_id, request.kind,
                                                           request.after_step, request.max_points));
    } else {
      curve.points = storage::ReadMetrics(tx, request.trial_id, request.kind, request.after_step,
                                          request.limit);
    }
    reply.downsampled = curve.downsampled;
    for (const auto& point : curve.points) {
      reply.metrics.push_back({point.step, point.run_id, point.metrics_json});
    }
    return Status::Ok();
  }));
  return reply;
}

Result<RecordReads::MetricSeriesAnswer> RecordReads::MetricSeries(const auth::Principal&,
                                                                  const MetricSeriesQuery& query) {
  DET_RETURN_IF_ERROR(CheckMetricGroup(query.kind, "group"));
  if (query.names.size() > kMaxSeriesNames) {
    return InvalidArgument("metric names: " + std::to_string(query.names.size()) +
                           " asked for, at most " + std::to_string(kMaxSeriesNames));
  }
  if (query.trial_ids.size() > kMaxSeriesTrials) {
    return InvalidArgument("trial_ids: " + std::to_string(query.trial_ids.size()) +
                           " asked for, at most " + std::to_string(kMaxSeriesTrials));
  }
  MetricSeriesAnswer answer;
  DET_RETURN_IF_ERROR(database_.Run([&](pqxx::work& tx) -> Status {
    answer = {};
    if (query.experiment_id != 0) {
      DET_RETURN_IF_ERROR(storage::GetExperiment(tx, query.experiment_id).status());
      for (const auto& trial : storage::ListTrials(tx, query.experiment_id)) {
        if (answer.trial_ids.size() == kMaxSeriesTrials) {
          answer.truncated = true;
          break;
        }
        answer.trial_ids.push_back(trial.id);
      }
    } else {
      for (int64_t id : query.trial_ids) DET_RETURN_IF_ERROR(storage::GetTrial(tx, id).status());
      answer.trial_ids = query.trial_ids;
    }
    if (query.with_names) answer.names = storage::ReadMetricNames(tx, answer.trial_ids);
    DET_ASSIGN_OR_RETURN(answer.series, storage::ReadMetricSeries(tx, answer.trial_ids, query.kind,
                                                                  query.names, query.max_points));
    if (query.with_times) storage::FillReportTimes(tx, query.kind, answer.series);
    return Status::Ok();
  }));
  return answer;
}

Result<bus::InstanceList> RecordReads::Instances(const auth::Principal&,
                                                 const bus::InstanceListRequest& request) {
  bus::InstanceList reply;
  DET_RETURN_IF_ERROR(database_.Run([&](pqxx::work& tx) -> Status {
    reply.instances.clear();
    for (const auto& record : storage::ListInstances(tx, request.resource_pool, !request.all)) {
      reply.instances.push_back(FromRecord(record));
    }
    return Status::Ok();
  }));
  return reply;
}

Result<bus::ScalingDecisionList> RecordReads::ScalingDecisions(
    const auth::Principal&, const bus::ScalingDecisionListRequest& request) {
  if (request.limit < 1 || request.limit > 1000) {
    return InvalidArgument("limit: " + std::to_string(request.limit) + " is outside 1..1000");
  }
  bus::ScalingDecisionList reply;
  DET_RETURN_IF_ERROR(database_.Run([&](pqxx::work& tx) -> Status {
    reply.decisions.clear();
    for (const auto& record :
         storage::ListScalingDecisions(tx, request.resource_pool, request.limit)) {
      reply.decisions.push_back(FromRecord(record));
    }
    return Status::Ok();
  }));
  return reply;
}

}  // namespace det::master

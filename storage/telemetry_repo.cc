#include "storage/telemetry_repo.h"

namespace det::storage {

std::vector<MetricPoint> ReadMetrics(pqxx::work& tx, int64_t trial_id, const std::string& kind,
                                     int64_t after_step, int limit) {
  std::vector<MetricPoint> points;
  for (const auto& row :
       tx.exec_params("SELECT trial_id, kind, step, run_id, metrics::text FROM metrics"
                      " WHERE trial_id = $1 AND kind = $2 AND step > $3 ORDER BY step LIMIT $4",
                      trial_id, kind, after_step, limit)) {
    points.push_back({row[0].as<int64_t>(), row[1].as<std::string>(), row[2].as<int64_t>(),
                      row[3].as<int32_t>(), row[4].as<std::string>()});
  }
  return points;
}

bool RecordMetric(pqxx::work& tx, const MetricPoint& point) {
  return tx.exec_params(
               "INSERT INTO metrics (trial_id, kind, step, run_id, metrics)"
               " VALUES ($1, $2, $3, $4, $5::jsonb) ON CONFLICT DO NOTHING",
               point.trial_id, point.kind, point.step, point.run_id, point.metrics_json)
             .affected_rows() == 1;
}

std::vector<StoredLogLine> ReadTaskLogs(pqxx::work& tx, const std::string& task_id,
                                        int64_t after_id, int limit) {
  std::vector<StoredLogLine> lines;
  for (const auto& row : tx.exec_params(
           "SELECT id, task_id, agent_id, det_ns(timestamp), level, stdtype, log FROM task_logs"
           " WHERE task_id = $1 AND id > $2 ORDER BY id LIMIT $3",
           task_id, after_id, limit)) {
    lines.push_back(
        {row[0].as<int64_t>(),
         {row[1].as<std::string>(), row[2].as<std::string>(), row[3].as<int64_t>(),
          row[4].as<std::string>(), row[5].as<std::string>(), row[6].as<std::string>()}});
  }
  return lines;
}

}  // namespace det::storage

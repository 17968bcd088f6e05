#include "storage/tasks_repo.h"

#include "storage/sql_support.h"

namespace det::storage {
namespace {

constexpr const char* kTaskSelect =
    "SELECT id, type, trial_id, config::text, det_ns(start_time), det_ns(end_time) FROM tasks";

TaskRecord ReadTask(const pqxx::row& row) {
  return {row[0].as<std::string>(), row[1].as<std::string>(), Nullable<int64_t>(row[2]),
          row[3].as<std::string>(), row[4].as<int64_t>(),     Nullable<int64_t>(row[5])};
}

constexpr const char* kAllocationSelect =
    "SELECT id, task_id, resource_pool, slots, agents::text, state, det_ns(start_time),"
    " det_ns(end_time), exit_code, failure FROM allocations";

AllocationRecord ReadAllocation(const pqxx::row& row) {
  return {row[0].as<std::string>(),     row[1].as<std::string>(),  row[2].as<std::string>(),
          row[3].as<int32_t>(),         row[4].as<std::string>(),  row[5].as<std::string>(),
          Nullable<int64_t>(row[6]),    Nullable<int64_t>(row[7]), Nullable<int32_t>(row[8]),
          Nullable<std::string>(row[9])};
}

std::vector<AllocationRecord> ReadAllocations(const pqxx::result& result) {
  std::vector<AllocationRecord> allocations;
  for (const auto& row : result) allocations.push_back(ReadAllocation(row));
  return allocations;
}

}  // namespace

std::string CreateTaskSql(pqxx::transaction_base& tx, const TaskRecord& task) {
  return "INSERT INTO tasks (id, type, trial_id, config, start_time) VALUES (" +
         Literal(tx, task.id) + ", " + Literal(tx, task.type) + ", " + Literal(tx, task.trial_id) +
         ", " + Literal(tx, task.config_json) + "::jsonb, det_ts(" + Literal(tx, task.start_ns) +
         ")) ON CONFLICT (id) DO NOTHING";
}

void CreateTask(pqxx::work& tx, const TaskRecord& task) { tx.exec(CreateTaskSql(tx, task)); }

Status SetTaskConfig(pqxx::work& tx, const std::string& id, const std::string& config_json) {
  return ExpectUpdated(
      tx.exec_params("UPDATE tasks SET config = $2::jsonb WHERE id = $1", id, config_json),
      "task \"" + id + "\"");
}

Result<TaskRecord> GetTask(pqxx::work& tx, const std::string& id) {
  auto result = tx.exec_params(std::string(kTaskSelect) + " WHERE id = $1", id);
  if (result.empty()) return NotFound("task \"" + id + "\" not found");
  return ReadTask(result[0]);
}

std::vector<TaskRecord> ListOpenTasks(pqxx::work& tx) {
  std::vector<TaskRecord> tasks;
  for (const auto& row :
       tx.exec(std::string(kTaskSelect) + " WHERE end_time IS NULL ORDER BY start_time, id")) {
    tasks.push_back(ReadTask(row));
  }
  return tasks;
}

std::string EndTaskSql(pqxx::transaction_base& tx, const std::string& id, int64_t end_ns) {
  return "UPDATE tasks SET end_time = det_ts(" + Literal(tx, end_ns) +
         ") WHERE id = " + Literal(tx, id);
}

Status EndTask(pqxx::work& tx, const std::string& id, int64_t end_ns) {
  return ExpectUpdated(tx.exec(EndTaskSql(tx, id, end_ns)), "task \"" + id + "\"");
}

std::string CreateAllocationSql(pqxx::transaction_base& tx, const AllocationRecord& a) {
  return "INSERT INTO allocations (id, task_id, resource_pool, slots, agents, state, start_time)"
         " VALUES (" +
         Literal(tx, a.id) + ", " + Literal(tx, a.task_id) + ", " + Literal(tx, a.resource_pool) +
         ", " + Literal(tx, a.slots) + ", " + Literal(tx, a.agents_json) + "::jsonb, " +
         Literal(tx, a.state) + ", det_ts(" + Literal(tx, a.start_ns) +
         ")) ON CONFLICT (id) DO NOTHING";
}

void CreateAllocation(pqxx::work& tx, const AllocationRecord& a) {
  tx.exec(CreateAllocationSql(tx, a));
}

Result<AllocationRecord> GetAllocation(pqxx::work& tx, const std::string& id) {
  auto result = tx.exec_params(std::string(kAllocationSelect) + " WHERE id = $1", id);
  if (result.empty()) return NotFound("allocation \"" + id + "\" not found");
  return ReadAllocation(result[0]);
}

Status SetAllocationPlaced(pqxx::work& tx, const std::string& id, const std::string& agents_json,
                           const std::string& state, int64_t start_ns) {
  return ExpectUpdated(tx.exec_params("UPDATE allocations SET agents = $2::jsonb, state = $3,"
                                      " start_time = det_ts($4) WHERE id = $1",
                                      id, agents_json, state, start_ns),
                       "allocation \"" + id + "\"");
}

std::string SetAllocationStateSql(pqxx::transaction_base& tx, const std::string& id,
                                  const std::string& state) {
  return "UPDATE allocations SET state = " + Literal(tx, state) + " WHERE id = " + Literal(tx, id);
}

Status SetAllocationState(pqxx::work& tx, const std::string& id, const std::string& state) {
  return ExpectUpdated(tx.exec(SetAllocationStateSql(tx, id, state)), "allocation \"" + id + "\"");
}

std::string FinishAllocationSql(pqxx::transaction_base& tx, const std::string& id,
                                const std::string& state, int64_t end_ns,
                                std::optional<int32_t> exit_code,
                                const std::optional<std::string>& failure) {
  return "UPDATE allocations SET state = " + Literal(tx, state) + ", end_time = det_ts(" +
         Literal(tx, end_ns) + "), exit_code = " + Literal(tx, exit_code) +
         ", failure = " + Literal(tx, failure) + " WHERE id = " + Literal(tx, id);
}

Status FinishAllocation(pqxx::work& tx, const std::string& id, const std::string& state,
                        int64_t end_ns, std::optional<int32_t> exit_code,
                        std::optional<std::string> failure) {
  return ExpectUpdated(tx.exec(FinishAllocationSql(tx, id, state, end_ns, exit_code, failure)),
                       "allocation \"" + id + "\"");
}

std::vector<AllocationRecord> ListOpenAllocations(pqxx::work& tx) {
  return ReadAllocations(tx.exec(std::string(kAllocationSelect) +
                                 " WHERE end_time IS NULL ORDER BY start_time NULLS LAST, id"));
}

std::vector<AllocationRecord> ListTaskAllocations(pqxx::work& tx, const std::string& task_id) {
  return ReadAllocations(tx.exec_params(
      std::string(kAllocationSelect) + " WHERE task_id = $1 ORDER BY start_time NULLS LAST, id",
      task_id));
}

std::map<std::string, int32_t> CountOpenTaskAllocations(pqxx::work& tx) {
  std::map<std::string, int32_t> counts;
  for (const auto& row :
       tx.exec("SELECT a.task_id, count(*) FROM allocations a JOIN tasks t ON t.id = a.task_id"
               " WHERE t.end_time IS NULL GROUP BY a.task_id")) {
    counts[row[0].as<std::string>()] = row[1].as<int32_t>();
  }
  return counts;
}

}  // namespace det::storage

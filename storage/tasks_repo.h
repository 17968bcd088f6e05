#pragma once

// Tasks (a trial's run, a command, a notebook...) and their allocations: the resources the
// scheduler gave a task, on which agents, and how it ended. A restarted master reloads the open
// allocations to find the work that was running.
//
// Functions take the caller's transaction (Database::Run). Times are Unix nanoseconds.

#include <cstdint>
#include <map>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "common/status.h"

namespace det::storage {

struct TaskRecord {
  std::string id;
  std::string type;  // TRIAL, COMMAND, ...
  std::optional<int64_t> trial_id;
  std::string config_json = "{}";
  int64_t start_ns = 0;
  std::optional<int64_t> end_ns;
};

// Idempotent: a task that exists is left as it is.
void CreateTask(pqxx::work& tx, const TaskRecord& task);
Result<TaskRecord> GetTask(pqxx::work& tx, const std::string& id);  // NotFound
Status EndTask(pqxx::work& tx, const std::string& id, int64_t end_ns);
// Replaces the task's config (its spec and job settings, which users may change).
Status SetTaskConfig(pqxx::work& tx, const std::string& id, const std::string& config_json);
// Tasks without an end time, oldest first: what a restarted master resumes.
std::vector<TaskRecord> ListOpenTasks(pqxx::work& tx);

struct AllocationRecord {
  std::string id;
  std::string task_id;
  std::string resource_pool;
  int32_t slots = 0;
  std::string agents_json = "[]";  // where it runs: [{"agent": id, "slots": [...]}]
  std::string state;
  std::optional<int64_t> start_ns;
  std::optional<int64_t> end_ns;
  std::optional<int32_t> exit_code;
  std::optional<std::string> failure;
};

// The writes above that the master makes for every task, as SQL text with their values quoted by
// `tx` (storage::Literal), for a writer that sends many in one message (master/records/store.h);
// each is the statement the function of the same name without "Sql" runs.
std::string CreateTaskSql(pqxx::transaction_base& tx, const TaskRecord& task);
std::string EndTaskSql(pqxx::transaction_base& tx, const std::string& id, int64_t end_ns);
std::string CreateAllocationSql(pqxx::transaction_base& tx, const AllocationRecord& allocation);
std::string SetAllocationStateSql(pqxx::transaction_base& tx, const std::string& id,
                                  const std::string& state);
std::string FinishAllocationSql(pqxx::transaction_base& tx, const std::string& id,
                                const std::string& state, int64_t end_ns,
                                std::optional<int32_t> exit_code,
                                const std::optional<std::string>& failure);

// Idempotent: an allocation that exists is left as it is.
void CreateAllocation(pqxx::work& tx, const AllocationRecord& allocation);
Result<AllocationRecord> GetAllocation(pqxx::work& tx, const std::string& id);  // NotFound
// Records where the allocation was placed and when it started.
Status SetAllocationPlaced(pqxx::work& tx, const std::string& id, const std::string& agents_json,
                           const std::string& state, int64_t start_ns);
Status SetAllocationState(pqxx::work& tx, const std::string& id, const std::string& state);
Status FinishAllocation(pqxx::work& tx, const std::string& id, const std::string& state,
                        int64_t end_ns, std::optional<int32_t> exit_code,
                        std::optional<std::string> failure);
// Allocations without an end time, oldest first.
std::vector<AllocationRecord> ListOpenAllocations(pqxx::work& tx);
std::vector<AllocationRecord> ListTaskAllocations(pqxx::work& tx, const std::string& task_id);
// How many allocations each task without an end time has had (tasks with none are left out).
std::map<std::string, int32_t> CountOpenTaskAllocations(pqxx::work& tx);

}  // namespace det::storage

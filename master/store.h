#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <pqxx/pqxx>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "bus/catalog/workload.h"
#include "storage/database.h"
#include "storage/ingest_writer.h"

namespace det::master {

// Writes the master's changes to PostgreSQL on a thread of its own, so that actors never wait on
// the database, in the order they were queued: a task's last log batch is stored before its end.
//
// Ops run in transactions (consecutive ops share one) and may be retried after a lost
// connection, so each must be idempotent. Log batches go through the IngestWriter with the batch
// id "<allocation>/<agent>/<incarnation>/<batch>": a batch sent twice is stored once; consecutive
// batches share a transaction (up to kLogBatchesPerTransaction). After a batch is committed a
// Notice for it is listed by TakeNotices(), so its sender can be told; EnqueueNotice does the
// same for anything else.
//
// Threading: Enqueue* and TakeNotices may be called from any thread.
class Store {
 public:
  using Op = std::function<void(pqxx::work&)>;
  // Something an agent is told once what came before it is committed: a log batch (batch > 0)
  // or a workload's end (batch == 0).
  struct Notice {
    std::string agent_id;
    std::string allocation_id;
    uint64_t batch = 0;
    std::string incarnation;  // of the agent that sent the batch
  };

  explicit Store(storage::DbConfig db);
  ~Store();  // writes what is queued, then stops

  void Enqueue(Op op);
  void EnqueueLogs(std::string agent_id, bus::WorkloadLogs logs);
  // Lists `notice` in TakeNotices() once everything queued before it is committed.
  void EnqueueNotice(Notice notice);
  // Calls `done` on the store's thread once the ops queued before it are committed (OK), or once
  // a write of those queued since the previous AfterCommit failed (the error; log batches are
  // their senders' to resend). `done` must be quick: the writes wait for it.
  using Committed = std::function<void(const Status& stored)>;
  void AfterCommit(Committed done);
  std::vector<Notice> TakeNotices();

 private:
  struct Logs {
    std::string agent_id;
    bus::WorkloadLogs logs;
  };
  using Item = std::variant<Op, Logs, Notice, Committed>;

  void Push(Item item);
  void Run();
  bool WriteOps(std::vector<Op>& ops);  // false when not written
  // Consecutive log batches in one transaction (cleared after); false when not written.
  bool WriteLogs(std::vector<const Logs*>& logs);
  static constexpr size_t kLogBatchesPerTransaction = 32;

  storage::Database db_;
  storage::IngestWriter ingest_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Item> queue_;
  std::vector<Notice> notices_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace det::master

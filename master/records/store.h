#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <pqxx/pqxx>
#include <string>
#include <thread>
#include <unordered_map>
#include <variant>
#include <vector>

#include "bus/catalog/workload.h"
#include "storage/database.h"
#include "storage/ingest_writer.h"

namespace det::master {

// Writes the master's changes to PostgreSQL on a thread of its own, so that actors never wait on
// the database, in the order they were queued: a task's last log batch is stored before its end.
//
// Ops run in transactions (consecutive ops share one; notices and AfterCommit callbacks wait for
// the next write instead of ending one; a round with no callback and no log batch is held up to
// kGroupCommitWait for more; statements alone go in one message, and a commit of lazy
// changes alone that nothing waits for does not wait for the disk) and may be retried after a lost
// connection, so each must be idempotent. A transaction PostgreSQL refuses is written again one op
// at a time: a bad op loses itself, and fails only the callback and notice that depend on it. Log
// batches go through the IngestWriter with the batch id
// "<allocation>/<agent>/<incarnation>/<batch>": a batch sent twice is stored once; consecutive
// batches share a transaction (up to kLogBatchesPerTransaction). After a batch is committed a
// Notice for it is listed by TakeNotices(), so its sender can be told; EnqueueNotice does the same
// for anything else.
//
// Threading: Enqueue* and TakeNotices may be called from any thread.
class Store {
 public:
  using Op = std::function<void(pqxx::work&)>;
  // An op as SQL text: one or more statements, each value quoted by `tx`
  // (storage::Literal). Consecutive statements reach PostgreSQL in one round trip, so the changes
  // every task makes (queued, placed, running, ended) cost one message per batch, not each.
  using Statement = std::function<std::string(pqxx::transaction_base&)>;
  // Something an agent is told once what came before it is committed: a log batch (batch > 0)
  // or a workload's end (batch == 0).
  struct Notice {
    std::string agent_id;
    std::string allocation_id;
    uint64_t batch = 0;
    std::string incarnation;  // of the agent that sent the batch
  };

  // A round that answers nobody and holds no log batch (task changes and agents' end notices at
  // most) waits up to `group_commit_wait` for more, so that task ends and the next submission
  // share a commit. Log batches are written at once: a task's last output is stored before
  // anyone who learns of its end reads it.
  static constexpr std::chrono::milliseconds kGroupCommitWait{10};
  explicit Store(storage::DbConfig db,
                 std::chrono::milliseconds group_commit_wait = kGroupCommitWait);
  ~Store();  // writes what is queued, then stops

  void Enqueue(Op op);
  // How a change reaches the disk. kDurable: before its commit returns, like every op and log
  // batch. kLazy: with the next durable commit, or within a second (PostgreSQL's WAL writer); for
  // a change nothing is told of and that is learnt again if lost, as a task's RUNNING (its agent
  // reports it again). A crash of the master loses neither once written; only one of PostgreSQL
  // or its host may lose lazy changes, never without everything committed after them. A commit
  // that a notice or AfterCommit waits for is durable whatever it holds, but they confirm only the
  // durable changes before them: a lazy change written alone before them may still be in memory.
  enum class Commit { kDurable, kLazy };
  // `supersedes`: the row state the statement sets in full (an allocation's state, say), for a
  // series of changes where each sets everything the one before it did. A later statement of the
  // same key replaces a lazy one still queued: a lazy one takes its place in the queue, a durable
  // one drops it and queues at the end. So a workload's PULLING, STARTING and RUNNING, and its end,
  // queued in one round are written as one change.
  void EnqueueStatement(Statement statement, Commit commit = Commit::kDurable,
                        std::string supersedes = "");
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
  struct LazyStatement {
    Statement statement;  // empty: superseded (skipped)
  };
  using Write = std::variant<Op, Statement>;
  using Item = std::variant<Op, Statement, LazyStatement, Logs, Notice, Committed>;

  void Push(Item item);
  // Queues `item` (mu_ held); whether the store's thread must be woken for it.
  bool PushLocked(Item item);
  // Applies `key` to the queue before `statement` is queued (mu_ held): true when it took a queued
  // lazy statement's place (nothing more to queue); a durable one drops that statement instead.
  bool SupersedeLocked(const std::string& key, Statement& statement, bool lazy);
  void Run();
  // Failures of one round that count against what the next rounds release.
  struct Failures {
    bool ops_failed = false;     // a write of ops that the next AfterCommit covers failed
    bool before_notice = false;  // a write since the last notice failed: withhold the next
  };
  // Writes one round of queued items.
  void WriteRound(std::deque<Item>& items, Failures& carried);
  // Writes `ops` in one transaction and clears them; which were not written (none: all false).
  // A batch PostgreSQL refuses (not a lost connection) is written again one op per transaction.
  // `durable`: the commit waits for the disk; otherwise not (storage::kUnacknowledgedCommit).
  std::vector<bool> WriteOps(std::vector<Write>& ops, bool durable);
  Status WriteTogether(const std::vector<Write>& ops, size_t from, size_t to, bool durable);
  // Statements alone: one message (BEGIN and COMMIT in it when it is over kMaxSqlPerMessage).
  Status WriteStatements(const std::vector<Write>& ops, size_t from, size_t to, bool durable);
  static constexpr size_t kMaxSqlPerMessage = 256 * 1024;  // statements' text sent at once
  // Consecutive log batches in one transaction (cleared after); false when not written.
  bool WriteLogs(std::vector<const Logs*>& logs);
  static constexpr size_t kLogBatchesPerTransaction = 32;

  storage::Database db_;
  storage::IngestWriter ingest_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Item> queue_;
  size_t queued_urgent_ = 0;  // AfterCommit callbacks and log batches in queue_
  // The keyed lazy statements in queue_ (their index), which a later one of the key supersedes.
  std::unordered_map<std::string, size_t> lazy_by_key_;
  std::vector<Notice> notices_;
  bool stop_ = false;
  const std::chrono::milliseconds group_commit_wait_;
  std::thread thread_;
};

}  // namespace det::master

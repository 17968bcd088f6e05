#include "master/records/store.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/thread_name.h"

namespace det::master {

Store::Store(storage::DbConfig db, std::chrono::milliseconds group_commit_wait)
    : db_(db, 2), ingest_(db), group_commit_wait_(group_commit_wait) {
  thread_ = std::thread([this] { Run(); });
}

Store::~Store() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

// Wakes the store's thread only when the item changes what it waits for: the first item of a
// round (it waits for work), or an urgent one (it ends a group-commit wait). Items that join a
// round already waiting out its group commit cost no wakeup.
bool Store::PushLocked(Item item) {
  const bool urgent = std::holds_alternative<Committed>(item) || std::holds_alternative<Logs>(item);
  if (urgent) ++queued_urgent_;
  const bool wake = urgent || queue_.empty();
  queue_.push_back(std::move(item));
  return wake;
}

void Store::Push(Item item) {
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    wake = PushLocked(std::move(item));
  }
  if (wake) wake_.notify_one();
}

void Store::Enqueue(Op op) { Push(std::move(op)); }

bool Store::SupersedeLocked(const std::string& key, Statement& statement, bool lazy) {
  auto queued = lazy_by_key_.find(key);
  if (queued == lazy_by_key_.end()) {
    if (lazy) lazy_by_key_.emplace(key, queue_.size());  // the index it is about to be pushed at
    return false;
  }
  auto& earlier = std::get<LazyStatement>(queue_[queued->second]);
  if (lazy) {  // in its place: nothing queued between depends on the key
    earlier.statement = std::move(statement);
    return true;
  }
  earlier.statement = nullptr;
  lazy_by_key_.erase(queued);
  return false;
}

void Store::EnqueueStatement(Statement statement, Commit commit, std::string supersedes) {
  const bool lazy = commit == Commit::kLazy;
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    if (!supersedes.empty() && SupersedeLocked(supersedes, statement, lazy)) return;
    wake =
        PushLocked(lazy ? Item{LazyStatement{std::move(statement)}} : Item{std::move(statement)});
  }
  if (wake) wake_.notify_one();
}

void Store::EnqueueLogs(std::string agent_id, bus::WorkloadLogs logs) {
  Push(Logs{std::move(agent_id), std::move(logs)});
}

void Store::EnqueueNotice(Notice notice) { Push(std::move(notice)); }

void Store::AfterCommit(Committed done) { Push(std::move(done)); }

std::vector<Store::Notice> Store::TakeNotices() {
  std::lock_guard lock(mu_);
  return std::exchange(notices_, {});
}

void Store::Run() {
  NameThisThread("store");
  Failures carried;
  std::unique_lock lock(mu_);
  while (true) {
    wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left to write
    // Nobody is answered from this round, nor output stored: a moment for more to share its
    // commit (group commit).
    wake_.wait_for(lock, group_commit_wait_, [&] { return stop_ || queued_urgent_ > 0; });
    queued_urgent_ = 0;
    lazy_by_key_.clear();
    std::deque<Item> items = std::exchange(queue_, {});
    lock.unlock();
    WriteRound(items, carried);
    lock.lock();
  }
}

// Ops and log batches are written in order, in as few transactions as that order allows (a change
// of kind ends one). Notices and AfterCommit callbacks never end a transaction: they wait for the
// next write, which covers everything queued before them, so a burst of task ends is one commit.
// Each remembers how many of that write's ops came before it, so that a failed write fails only
// the callbacks and notices whose ops were in it (and a failure before a notice, in a write of
// its own, still withholds it).
void Store::WriteRound(std::deque<Item>& items, Failures& carried) {
  struct Waiting {
    Item* item;
    size_t ops_before;           // of the pending ops, those queued before it
    bool failed_before = false;  // a notice: a write failed between the previous notice and it
  };
  std::vector<Write> ops;
  bool durable = false;           // a change in `ops` is, or something waits for them
  std::vector<const Logs*> logs;  // consecutive log batches: one transaction
  std::vector<Waiting> waiting;   // notices and callbacks, for the next write
  auto write = [&] {
    const std::vector<bool> op_failed = WriteOps(ops, durable || !waiting.empty());
    durable = false;
    const bool logs_written = WriteLogs(logs);
    auto failed_in = [&](size_t from, size_t to) {
      return std::find(op_failed.begin() + from, op_failed.begin() + to, true) !=
             op_failed.begin() + to;
    };
    size_t reported = 0, noticed = 0;  // ops before the last callback, and the last notice
    for (Waiting& wait : waiting) {
      if (auto* done = std::get_if<Committed>(wait.item)) {
        const bool failed = carried.ops_failed || failed_in(reported, wait.ops_before);
        (*done)(failed ? Unavailable("the database did not take the change (see the master's log)")
                       : Status::Ok());
        carried.ops_failed = false;
        reported = wait.ops_before;
        continue;
      }
      const bool withheld =
          wait.failed_before || failed_in(noticed, wait.ops_before) || !logs_written;
      noticed = wait.ops_before;
      if (!withheld) {
        std::lock_guard notice_lock(mu_);
        notices_.push_back(std::move(std::get<Notice>(*wait.item)));
      }
    }
    carried.ops_failed |= failed_in(reported, op_failed.size());
    carried.before_notice |= failed_in(noticed, op_failed.size()) || !logs_written;
    waiting.clear();
  };
  for (Item& item : items) {
    if (std::holds_alternative<Op>(item) || std::holds_alternative<Statement>(item) ||
        std::holds_alternative<LazyStatement>(item)) {
      if (!logs.empty()) write();
      if (auto* op = std::get_if<Op>(&item)) {
        ops.emplace_back(std::move(*op));
        durable = true;
      } else if (auto* statement = std::get_if<Statement>(&item)) {
        ops.emplace_back(std::move(*statement));
        durable = true;
      } else if (auto& lazy = std::get<LazyStatement>(item); lazy.statement) {
        ops.emplace_back(std::move(lazy.statement));
      }
    } else if (auto* batch = std::get_if<Logs>(&item)) {
      if (!ops.empty()) write();
      logs.push_back(batch);
      if (logs.size() == kLogBatchesPerTransaction) write();
    } else if (std::holds_alternative<Notice>(item)) {
      waiting.push_back({&item, ops.size(), std::exchange(carried.before_notice, false)});
    } else {
      waiting.push_back({&item, ops.size()});
    }
  }
  write();
}

std::vector<bool> Store::WriteOps(std::vector<Write>& ops, bool durable) {
  std::vector<bool> failed(ops.size(), false);
  if (ops.empty()) return failed;
  const Status status = WriteTogether(ops, 0, ops.size(), durable);
  if (status.ok()) {
    ops.clear();
    return failed;
  }
  if (status.code() == StatusCode::kUnavailable || ops.size() == 1) {
    spdlog::error("store: {} changes not written: {}", ops.size(), status.message());
    failed.assign(ops.size(), true);
    ops.clear();
    return failed;
  }
  // PostgreSQL refused the batch (not a lost connection): one bad change loses only itself.
  spdlog::warn("store: {} changes refused together ({}); writing them one at a time", ops.size(),
               status.message());
  for (size_t i = 0; i < ops.size(); ++i) {
    const Status one = WriteTogether(ops, i, i + 1, durable);
    if (one.ok()) continue;
    failed[i] = true;
    spdlog::error("store: a change not written: {}", one.message());
  }
  ops.clear();
  return failed;
}

Status Store::WriteTogether(const std::vector<Write>& ops, size_t from, size_t to, bool durable) {
  const bool statements_only = std::all_of(
      ops.begin() + static_cast<ptrdiff_t>(from), ops.begin() + static_cast<ptrdiff_t>(to),
      [](const Write& op) { return std::holds_alternative<Statement>(op); });
  if (statements_only) return WriteStatements(ops, from, to, durable);
  return db_.Run([&](pqxx::work& tx) {
    std::string sql = durable ? "" : std::string(storage::kUnacknowledgedCommit) + ";\n";
    auto send = [&] {  // consecutive statements, sent together
      if (!sql.empty()) tx.exec(sql);
      sql.clear();
    };
    for (size_t i = from; i < to; ++i) {
      if (const auto* op = std::get_if<Op>(&ops[i])) {
        send();
        (*op)(tx);
        continue;
      }
      sql += std::get<Statement>(ops[i])(tx);
      sql += ";\n";
      if (sql.size() >= kMaxSqlPerMessage) send();
    }
    send();
    return Status::Ok();
  });
}

// A message of several statements is one transaction (PostgreSQL's simple query protocol), so
// statements that fit in one message need no BEGIN or COMMIT of their own; longer ones open an
// explicit transaction in their first message and end it in their last. A failure drops the
// connection (Database::RunUntransacted), which rolls back what such a transaction wrote.
Status Store::WriteStatements(const std::vector<Write>& ops, size_t from, size_t to, bool durable) {
  return db_.RunUntransacted([&](pqxx::nontransaction& tx) {
    std::string sql = durable ? "" : std::string(storage::kUnacknowledgedCommit) + ";\n";
    bool explicit_transaction = false;
    for (size_t i = from; i < to; ++i) {
      sql += std::get<Statement>(ops[i])(tx);
      sql += ";\n";
      if (sql.size() >= kMaxSqlPerMessage && i + 1 < to) {
        if (!explicit_transaction) sql = "BEGIN;\n" + sql;
        explicit_transaction = true;
        tx.exec(sql);
        sql.clear();
      }
    }
    if (explicit_transaction) sql += "COMMIT;";
    tx.exec(sql);
    return Status::Ok();
  });
}

namespace {

std::vector<storage::LogLine> StoredLines(const std::string& agent_id,
                                          const bus::WorkloadLogs& logs) {
  std::vector<storage::LogLine> lines;
  lines.reserve(logs.lines.size());
  for (const bus::WorkloadLogLine& line : logs.lines) {
    storage::LogLine& stored = lines.emplace_back(storage::LogLine{
        logs.task_id, agent_id, line.timestamp, line.stdtype == "stderr" ? "ERROR" : "INFO",
        line.stdtype, storage::ValidUtf8(line.text)});
    if (line.offset >= 0) {
      stored.allocation_id = logs.allocation_id;
      stored.source_offset = line.offset;
    }
  }
  return lines;
}

}  // namespace

bool Store::WriteLogs(std::vector<const Logs*>& items) {
  if (items.empty()) return true;
  std::vector<std::vector<storage::LogLine>> lines;
  std::vector<storage::IngestWriter::LogBatch> batches;
  lines.reserve(items.size());
  for (const Logs* item : items) {
    const bus::WorkloadLogs& logs = item->logs;
    lines.push_back(StoredLines(item->agent_id, logs));
    // Batch numbers restart with each agent process: the incarnation keeps the ids apart; the
    // agent, those of one allocation's containers on several agents.
    batches.push_back({logs.allocation_id + "/" + item->agent_id + "/" + logs.incarnation + "/" +
                           std::to_string(logs.batch),
                       &lines.back()});
  }
  Status status = ingest_.WriteLogBatches(batches);
  std::lock_guard lock(mu_);
  for (const Logs* item : items) {
    const bus::WorkloadLogs& logs = item->logs;
    if (!status.ok()) {
      spdlog::error("store: log batch {} of {} not written: {}", logs.batch, logs.allocation_id,
                    status.message());
      continue;  // not acknowledged: the agent keeps it and sends it again
    }
    notices_.push_back({item->agent_id, logs.allocation_id, logs.batch, logs.incarnation});
  }
  items.clear();
  return status.ok();
}

}  // namespace det::master

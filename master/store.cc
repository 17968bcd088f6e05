#include "master/store.h"

#include <spdlog/spdlog.h>

namespace det::master {

Store::Store(storage::DbConfig db) : db_(db, 2), ingest_(db) {
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

void Store::Push(Item item) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(item));
  }
  wake_.notify_one();
}

void Store::Enqueue(Op op) { Push(std::move(op)); }

void Store::EnqueueStatement(Statement statement) { Push(std::move(statement)); }

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
  bool ops_failed = false;  // a write of ops that the next AfterCommit covers failed
  std::unique_lock lock(mu_);
  while (true) {
    wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left to write
    std::deque<Item> items = std::exchange(queue_, {});
    lock.unlock();
    WriteRound(items, ops_failed);
    lock.lock();
  }
}

// Ops and log batches are written in order, in as few transactions as that order allows (a change
// of kind ends one). Notices and AfterCommit callbacks never end a transaction: they wait for the
// next write, which covers everything queued before them, so a burst of task ends is one commit.
void Store::WriteRound(std::deque<Item>& items, bool& ops_failed) {
  std::vector<Write> ops;
  std::vector<const Logs*> logs;    // consecutive log batches: one transaction
  std::vector<Item*> waiting;       // notices and callbacks, for the next write
  bool failed = false;              // a write of this round failed: no notice goes out after it
  bool ops_after_callback = false;  // of the ops not yet written, some came after a callback
  auto write = [&] {
    const bool ops_written = WriteOps(ops);
    failed |= !ops_written || !WriteLogs(logs);
    bool callbacks = false;
    for (Item* item : waiting) {
      if (auto* done = std::get_if<Committed>(item)) {
        (*done)(ops_failed || !ops_written
                    ? Unavailable("the database did not take the change (see the master's log)")
                    : Status::Ok());
        ops_failed = false;
        callbacks = true;
      } else if (!failed) {
        std::lock_guard notice_lock(mu_);
        notices_.push_back(std::move(std::get<Notice>(*item)));
      }
    }
    ops_failed |= !ops_written && (!callbacks || ops_after_callback);
    ops_after_callback = false;
    waiting.clear();
  };
  for (Item& item : items) {
    if (std::holds_alternative<Op>(item) || std::holds_alternative<Statement>(item)) {
      if (!logs.empty()) write();
      if (auto* op = std::get_if<Op>(&item)) {
        ops.emplace_back(std::move(*op));
      } else {
        ops.emplace_back(std::move(std::get<Statement>(item)));
      }
      ops_after_callback = true;
    } else if (auto* batch = std::get_if<Logs>(&item)) {
      if (!ops.empty()) write();
      logs.push_back(batch);
      if (logs.size() == kLogBatchesPerTransaction) write();
    } else {
      if (std::holds_alternative<Committed>(item)) ops_after_callback = false;
      waiting.push_back(&item);
    }
  }
  write();
}

bool Store::WriteOps(std::vector<Write>& ops) {
  if (ops.empty()) return true;
  Status status = db_.Run([&](pqxx::work& tx) {
    std::string sql;  // consecutive statements, sent together
    auto send = [&] {
      if (!sql.empty()) tx.exec(sql);
      sql.clear();
    };
    for (const Write& write : ops) {
      if (const auto* op = std::get_if<Op>(&write)) {
        send();
        (*op)(tx);
        continue;
      }
      sql += std::get<Statement>(write)(tx);
      sql += ";\n";
      if (sql.size() >= kMaxSqlPerMessage) send();
    }
    send();
    return Status::Ok();
  });
  if (!status.ok()) {
    spdlog::error("store: {} changes not written: {}", ops.size(), status.message());
  }
  ops.clear();
  return status.ok();
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

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
  bool ops_failed = false;  // a write of ops since the last AfterCommit failed (across batches)
  std::unique_lock lock(mu_);
  while (true) {
    wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left to write
    std::deque<Item> items = std::exchange(queue_, {});
    lock.unlock();
    std::vector<Op> ops;
    std::vector<const Logs*> logs;  // consecutive log batches: one transaction
    bool failed = false;            // then no notice goes out: what it confirms may not be stored
    for (Item& item : items) {
      if (auto* op = std::get_if<Op>(&item)) {
        failed |= !WriteLogs(logs);
        ops.push_back(std::move(*op));
        continue;
      }
      const bool ops_written = WriteOps(ops);  // everything queued before goes first
      failed |= !ops_written;
      ops_failed |= !ops_written;
      if (auto* batch = std::get_if<Logs>(&item)) {
        logs.push_back(batch);
        if (logs.size() == kLogBatchesPerTransaction) failed |= !WriteLogs(logs);
        continue;
      }
      failed |= !WriteLogs(logs);
      if (auto* done = std::get_if<Committed>(&item)) {
        (*done)(ops_failed
                    ? Unavailable("the database did not take the change (see the master's log)")
                    : Status::Ok());
        ops_failed = false;
        continue;
      }
      if (!failed) {
        std::lock_guard notice_lock(mu_);
        notices_.push_back(std::move(std::get<Notice>(item)));
      }
    }
    WriteLogs(logs);
    ops_failed |= !WriteOps(ops);
    lock.lock();
  }
}

bool Store::WriteOps(std::vector<Op>& ops) {
  if (ops.empty()) return true;
  Status status = db_.Run([&](pqxx::work& tx) {
    for (const Op& op : ops) op(tx);
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

#include "master/records/log_retention.h"

#include <spdlog/spdlog.h>

#include "common/schedule.h"
#include "common/thread_name.h"
#include "storage/logs_repo.h"

namespace det::master {

LogRetention::LogRetention(storage::Database& db, LogRetentionConfig config, const Clock& clock)
    : db_(db), config_(std::move(config)), clock_(clock) {
  if (!config_.schedule.empty()) thread_ = std::thread([this] { Loop(); });
}

LogRetention::~LogRetention() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Result<int64_t> LogRetention::RunOnce() {
  int64_t removed = 0;
  DET_RETURN_IF_ERROR(db_.Run([&](pqxx::work& tx) {
    removed =
        storage::DeleteExpiredLogs(tx, config_.log_retention_days, UnixNanos(clock_.WallNow()));
    return Status::Ok();
  }));
  return removed;
}

void LogRetention::Loop() {
  NameThisThread("log-retention");
  Result<Schedule> schedule = Schedule::Parse(config_.schedule);  // checked with the config
  if (!schedule.ok()) return;
  auto now_s = [this] {
    return std::chrono::duration_cast<std::chrono::seconds>(clock_.WallNow().time_since_epoch())
        .count();
  };
  const int64_t start = now_s();
  std::unique_lock lock(mu_);
  while (!stop_) {
    const int64_t next = schedule->NextAfter(now_s(), start);
    const auto at = std::chrono::system_clock::time_point(std::chrono::seconds(next));
    if (wake_.wait_until(lock, at, [&] { return stop_; })) return;
    lock.unlock();
    Result<int64_t> removed = RunOnce();
    if (removed.ok()) {
      spdlog::info("log retention: removed {} lines of tasks that ended {}+ days ago", *removed,
                   config_.log_retention_days);
    } else {
      spdlog::warn("log retention: {}", removed.status().message());
    }
    lock.lock();
  }
}

}  // namespace det::master

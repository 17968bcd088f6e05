#pragma once

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "storage/database.h"

namespace det::master {

// `retention_policy:` Determined's log retention: the logs of tasks that ended at least
// log_retention_days days ago (-1: keep forever) are removed on `schedule` (a duration such as
// "24h" or a cron expression; empty: never).
struct LogRetentionConfig {
  int log_retention_days = -1;
  std::string schedule;
};

// Runs Determined's log retention on master.yaml's retention_policy.schedule: removes the logs of
// tasks that ended log_retention_days days ago or more (an experiment's own
// retention_policy.log_retention_days wins for its trials; -1 keeps them). A run that fails is
// logged and the next one tries again.
//
// Threading: a thread of its own, stopped by the destructor.
class LogRetention {
 public:
  // Nothing runs when the config has no schedule.
  LogRetention(storage::Database& db, LogRetentionConfig config,
               const Clock& clock = RealClock::Instance());
  ~LogRetention();

  // One run now; how many lines went.
  Result<int64_t> RunOnce();
  int days() const { return config_.log_retention_days; }

 private:
  void Loop();

  storage::Database& db_;
  const LogRetentionConfig config_;
  const Clock& clock_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace det::master

#pragma once

// The master's own recent log lines, kept in memory for `det master logs` and
// GET /api/v1/master/logs.

#include <spdlog/sinks/base_sink.h>

#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bus/catalog/master.h"

namespace det::master {

// A spdlog sink that keeps the last `capacity` lines, each with an id that grows by one per line
// (so a follower asks for what came after the last id it saw) and the line's level and time.
// Thread-safe: spdlog calls it from any logging thread, readers from the front door.
class LogBuffer final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit LogBuffer(size_t capacity = 10000) : capacity_(capacity) {}

  // Lines with id > after_id, oldest first, at most `limit`.
  std::vector<bus::MasterLogLine> After(int64_t after_id, int32_t limit);

  // Adds a buffer to spdlog's default logger (after InitLogging) and returns it.
  static std::shared_ptr<LogBuffer> AttachToDefaultLogger(size_t capacity = 10000);

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override;
  void flush_() override {}

 private:
  const size_t capacity_;
  std::deque<bus::MasterLogLine> lines_;
  int64_t next_id_ = 1;
  std::mutex read_mu_;  // readers against sink_it_ (which holds the base sink's mutex)
};

}  // namespace det::master

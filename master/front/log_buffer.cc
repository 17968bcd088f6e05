#include "master/front/log_buffer.h"

#include <spdlog/spdlog.h>

namespace det::master {

void LogBuffer::sink_it_(const spdlog::details::log_msg& msg) {
  bus::MasterLogLine line;
  line.level = std::string(spdlog::level::to_string_view(msg.level).data(),
                           spdlog::level::to_string_view(msg.level).size());
  line.timestamp =
      std::chrono::duration_cast<std::chrono::nanoseconds>(msg.time.time_since_epoch()).count();
  line.message.assign(msg.payload.data(), msg.payload.size());
  std::lock_guard lock(read_mu_);
  line.id = next_id_++;
  lines_.push_back(std::move(line));
  if (lines_.size() > capacity_) lines_.pop_front();
}

std::vector<bus::MasterLogLine> LogBuffer::After(int64_t after_id, int32_t limit) {
  std::lock_guard lock(read_mu_);
  std::vector<bus::MasterLogLine> out;
  for (const bus::MasterLogLine& line : lines_) {
    if (line.id <= after_id) continue;
    if (static_cast<int32_t>(out.size()) >= limit) break;
    out.push_back(line);
  }
  return out;
}

std::shared_ptr<LogBuffer> LogBuffer::AttachToDefaultLogger(size_t capacity) {
  auto buffer = std::make_shared<LogBuffer>(capacity);
  spdlog::default_logger()->sinks().push_back(buffer);
  return buffer;
}

}  // namespace det::master

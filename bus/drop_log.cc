#include "bus/drop_log.h"

#include <spdlog/spdlog.h>

#include "bus/envelope.h"

namespace det::bus {

DropLog::DropLog(std::string endpoint_name, const Clock& clock, Duration interval)
    : endpoint_name_(std::move(endpoint_name)), clock_(clock), interval_(interval) {}

void DropLog::Record(std::string_view sender, const Status& why) {
  total_.fetch_add(1, std::memory_order_relaxed);
  const MonoTime now = clock_.Now();
  std::string key = Printable(sender);
  auto it = senders_.find(key);
  if (it == senders_.end()) {
    if (senders_.size() >= kMaxTrackedSenders) senders_.clear();
    senders_[key] = SenderState{now, 0};
    spdlog::warn("{}: dropped a message from {}: {}", endpoint_name_, key, why.message());
    ++logged_;
    return;
  }
  SenderState& state = it->second;
  if (now - state.last_logged < interval_) {
    ++state.suppressed;
    return;
  }
  spdlog::warn("{}: dropped a message from {}: {} ({} more dropped since the last report)",
               endpoint_name_, key, why.message(), state.suppressed);
  ++logged_;
  state.last_logged = now;
  state.suppressed = 0;
}

}  // namespace det::bus

#pragma once

// When a periodic job runs: every fixed duration ("24h", counted from the start) or on a cron
// expression ("0 0 * * *": minute, hour, day of month, month, day of week; each field `*`, a
// number, a range `a-b`, a step `*/n` or `a-b/n`, or a comma-separated list of those; day of week
// 0-7 with 0 and 7 Sunday; times in UTC). Determined's retention_policy.schedule takes both.

#include <array>
#include <bitset>
#include <cstdint>
#include <optional>
#include <string>

#include "common/clock.h"
#include "common/status.h"

namespace det {

class Schedule {
 public:
  // A duration or a cron expression; an error names what is wrong with `text`.
  static Result<Schedule> Parse(const std::string& text);

  // The first run strictly after `after_unix_s` (seconds), for a schedule that started at
  // `start_unix_s` (a duration's runs are start + k * period).
  int64_t NextAfter(int64_t after_unix_s, int64_t start_unix_s) const;

 private:
  std::optional<int64_t> period_s_;  // a duration; else the cron fields
  std::bitset<60> minutes_;
  std::bitset<24> hours_;
  std::bitset<32> days_;                      // 1-31
  std::bitset<13> months_;                    // 1-12
  std::bitset<7> weekdays_;                   // 0 Sunday
  bool any_day_ = true, any_weekday_ = true;  // a `*` field: cron's day-or-weekday rule
};

}  // namespace det

#include "common/schedule.h"

#include <ctime>
#include <sstream>
#include <vector>

#include "common/config.h"

namespace det {
namespace {

std::vector<std::string> Split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, separator)) parts.push_back(part);
  return parts;
}

std::optional<int> Number(const std::string& text) {
  if (text.empty() || text.size() > 4 || text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoi(text);
}

// Sets the bits of `field` (values low..high) that `text` names; false when it is not valid.
template <size_t N>
bool ReadField(const std::string& text, int low, int high, std::bitset<N>* field) {
  for (const std::string& item : Split(text, ',')) {
    const size_t slash = item.find('/');
    const std::string range = item.substr(0, slash);
    int step = 1;
    if (slash != std::string::npos) {
      auto n = Number(item.substr(slash + 1));
      if (!n || *n < 1) return false;
      step = *n;
    }
    int from = low, to = high;
    if (range != "*") {
      const size_t dash = range.find('-');
      auto a = Number(range.substr(0, dash));
      auto b = dash == std::string::npos ? a : Number(range.substr(dash + 1));
      if (!a || !b || *a < low || *b > high || *a > *b) return false;
      from = *a;
      to = slash != std::string::npos && dash == std::string::npos ? high : *b;
    }
    for (int v = from; v <= to; v += step) field->set(static_cast<size_t>(v));
  }
  return true;
}

}  // namespace

Result<Schedule> Schedule::Parse(const std::string& text) {
  Schedule schedule;
  if (Result<Duration> period = ParseDuration(text); period.ok()) {
    const int64_t seconds = std::chrono::duration_cast<std::chrono::seconds>(*period).count();
    if (seconds < 1) return InvalidArgument("\"" + text + "\": a period must be 1s or longer");
    schedule.period_s_ = seconds;
    return schedule;
  }
  std::vector<std::string> fields;
  for (const std::string& f : Split(text, ' ')) {
    if (!f.empty()) fields.push_back(f);
  }
  std::bitset<8> weekdays;
  const bool valid = fields.size() == 5 && ReadField(fields[0], 0, 59, &schedule.minutes_) &&
                     ReadField(fields[1], 0, 23, &schedule.hours_) &&
                     ReadField(fields[2], 1, 31, &schedule.days_) &&
                     ReadField(fields[3], 1, 12, &schedule.months_) &&
                     ReadField(fields[4], 0, 7, &weekdays);
  if (!valid) {
    return InvalidArgument("\"" + text +
                           "\" is neither a duration (24h) nor a cron expression of five fields "
                           "(minute hour day-of-month month day-of-week, e.g. \"0 0 * * *\")");
  }
  for (size_t d = 0; d < 7; ++d) schedule.weekdays_[d] = weekdays[d] || (d == 0 && weekdays[7]);
  schedule.any_day_ = fields[2] == "*";
  schedule.any_weekday_ = fields[4] == "*";
  return schedule;
}

int64_t Schedule::NextAfter(int64_t after_unix_s, int64_t start_unix_s) const {
  if (period_s_) {
    if (after_unix_s < start_unix_s) return start_unix_s + *period_s_;
    return start_unix_s + ((after_unix_s - start_unix_s) / *period_s_ + 1) * *period_s_;
  }
  // Minute by minute, at most a little over four years ahead (29 February on a Monday).
  int64_t t = (after_unix_s / 60 + 1) * 60;
  for (int64_t i = 0; i < 60 * 24 * 366 * 5; ++i, t += 60) {
    const std::time_t at = static_cast<std::time_t>(t);
    std::tm utc{};
    gmtime_r(&at, &utc);
    if (!minutes_[utc.tm_min] || !hours_[utc.tm_hour] || !months_[utc.tm_mon + 1]) continue;
    const bool day = days_[utc.tm_mday], weekday = weekdays_[utc.tm_wday];
    // cron: when both are restricted, either may match; else the restricted one must.
    const bool day_ok = any_day_ || any_weekday_ ? day && weekday : day || weekday;
    if (day_ok) return t;
  }
  return std::numeric_limits<int64_t>::max();
}

}  // namespace det

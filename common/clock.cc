#include "common/clock.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace det {

std::string Rfc3339Utc(int64_t unix_ns, int fraction_digits) {
  int64_t seconds = unix_ns / 1000000000, nanos = unix_ns % 1000000000;
  if (nanos < 0) {
    seconds -= 1;
    nanos += 1000000000;
  }
  const time_t whole = static_cast<time_t>(seconds);
  std::tm utc{};
  gmtime_r(&whole, &utc);
  char text[64];
  int n = std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d", utc.tm_year + 1900,
                        utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec);
  if (fraction_digits > 0) {
    char fraction[16];
    std::snprintf(fraction, sizeof fraction, "%09lld", static_cast<long long>(nanos));
    n += std::snprintf(text + n, sizeof text - n, ".%.*s", std::min(fraction_digits, 9), fraction);
  }
  std::snprintf(text + n, sizeof text - n, "Z");
  return text;
}

std::optional<int64_t> ParseRfc3339Utc(const std::string& text) {
  std::tm tm{};
  if (text.size() < 20 || text.back() != 'Z') return std::nullopt;
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &consumed) != 6 ||
      consumed != 19) {
    return std::nullopt;
  }
  int64_t nanos = 0;
  const std::string rest = text.substr(19, text.size() - 20);  // between the seconds and "Z"
  if (!rest.empty()) {
    if (rest[0] != '.' || rest.size() < 2 || rest.size() > 10) return std::nullopt;
    for (size_t i = 1; i < 10; ++i) {
      const char digit = i < rest.size() ? rest[i] : '0';
      if (digit < '0' || digit > '9') return std::nullopt;
      nanos = nanos * 10 + (digit - '0');
    }
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<int64_t>(timegm(&tm)) * 1000000000 + nanos;
}

RealClock& RealClock::Instance() {
  static RealClock clock;
  return clock;
}

SimulatedClock::SimulatedClock()
    : mono_(MonoTime(std::chrono::hours(1))), wall_(WallTime(std::chrono::seconds(1767225600))) {}

MonoTime SimulatedClock::Now() const {
  std::lock_guard lock(mu_);
  return mono_;
}

WallTime SimulatedClock::WallNow() const {
  std::lock_guard lock(mu_);
  return wall_;
}

void SimulatedClock::Advance(Duration d) {
  std::lock_guard lock(mu_);
  mono_ += d;
  wall_ += std::chrono::duration_cast<WallTime::duration>(d);
}

}  // namespace det

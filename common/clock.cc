#include "common/clock.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <thread>

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

void RealClock::SleepUntil(MonoTime deadline) const { std::this_thread::sleep_until(deadline); }

SimulatedClock::SimulatedClock(Sleeps sleeps)
    : sleeps_(sleeps),
      mono_(MonoTime(std::chrono::hours(1))),
      wall_(WallTime(std::chrono::seconds(1767225600))) {}

MonoTime SimulatedClock::Now() const {
  std::lock_guard lock(mu_);
  return mono_;
}

WallTime SimulatedClock::WallNow() const {
  std::lock_guard lock(mu_);
  return wall_;
}

void SimulatedClock::SleepUntil(MonoTime deadline) const {
  std::unique_lock lock(mu_);
  if (mono_ >= deadline) return;
  if (sleeps_ == Sleeps::kSleepAdvances) {
    slept_.push_back(deadline - mono_);
    lock.unlock();
    MoveTo(deadline);
    return;
  }
  ++sleepers_;
  moved_.notify_all();
  moved_.wait(lock, [&] { return mono_ >= deadline; });
  --sleepers_;
}

std::function<void()> SimulatedClock::StepTowards(MonoTime to) const {
  std::lock_guard lock(mu_);
  std::function<void()> due;
  MonoTime step_to = to;
  if (!alarms_.empty() && alarms_.begin()->first.first <= to) {
    auto first = alarms_.begin();
    step_to = std::max(mono_, first->first.first);
    due = std::move(first->second);
    alarms_.erase(first);
  }
  wall_ += std::chrono::duration_cast<WallTime::duration>(step_to - mono_);
  mono_ = step_to;
  moved_.notify_all();
  return due;
}

void SimulatedClock::MoveTo(MonoTime target) const {
  while (auto due = StepTowards(target)) due();
}

SimulatedClock::AlarmId SimulatedClock::SetAlarm(MonoTime when, std::function<void()> fire) {
  std::unique_lock lock(mu_);
  const AlarmId id = next_alarm_++;
  if (when <= mono_) {
    lock.unlock();
    fire();
    return id;
  }
  alarms_.emplace(std::make_pair(when, id), std::move(fire));
  return id;
}

bool SimulatedClock::CancelAlarm(AlarmId id) {
  std::lock_guard lock(mu_);
  for (auto it = alarms_.begin(); it != alarms_.end(); ++it) {
    if (it->first.second == id) {
      alarms_.erase(it);
      return true;
    }
  }
  return false;
}

size_t SimulatedClock::pending_alarms() const {
  std::lock_guard lock(mu_);
  return alarms_.size();
}

size_t SimulatedClock::sleepers() const {
  std::lock_guard lock(mu_);
  return sleepers_;
}

bool SimulatedClock::AwaitSleepers(size_t count, Duration limit) const {
  std::unique_lock lock(mu_);
  return moved_.wait_for(lock, limit, [&] { return sleepers_ >= count; });
}

std::vector<Duration> SimulatedClock::slept() const {
  std::lock_guard lock(mu_);
  return slept_;
}

}  // namespace det

#pragma once

// Answers to reads that many clients repeat with the same query (an active experiment's curves,
// polled by every open page), kept `max_age` by their key so that N pollers cost one read per
// max_age, not N. Unlike AnswerCache (fixed keys, replaced on events) any key may come; the
// answers held are bounded by their total size (the least recently fetched go first). One caller
// fetches a key while the others asking for it wait for that fetch (single flight); a failed
// fetch is not kept. A reader sees data at most max_age old.

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "common/clock.h"
#include "common/status.h"

namespace det::master {

class RecentAnswers {
 public:
  using Answer = std::shared_ptr<const std::string>;
  using Fetch = std::function<Result<std::string>()>;

  RecentAnswers(Duration max_age, size_t max_bytes, const Clock& clock = RealClock::Instance());

  // The answer kept for `key` when it is younger than max_age, else `fetch`'s (kept when it
  // succeeded). Thread-safe; `fetch` runs on the calling thread without the cache's lock.
  Result<Answer> Get(const std::string& key, const Fetch& fetch);

  size_t bytes() const;     // held now
  int64_t fetches() const;  // how often Get() fetched (tests)

 private:
  struct Entry {
    std::mutex fetching;  // held while one caller fetches this key
    Answer answer;        // guarded by the cache's mu_
    MonoTime fetched_at{};
  };
  Answer Fresh(const Entry& entry) const;  // mu_ held
  void Keep(const std::string& key, const std::shared_ptr<Entry>& entry, Answer answer);

  const Duration max_age_;
  const size_t max_bytes_;
  const Clock& clock_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Entry>> entries_;
  size_t bytes_ = 0;
  int64_t fetches_ = 0;
};

}  // namespace det::master

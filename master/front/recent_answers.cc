#include "master/front/recent_answers.h"

#include <utility>

namespace det::master {

RecentAnswers::RecentAnswers(Duration max_age, size_t max_bytes, const Clock& clock)
    : max_age_(max_age), max_bytes_(max_bytes), clock_(clock) {}

RecentAnswers::Answer RecentAnswers::Fresh(const Entry& entry) const {
  if (entry.answer && clock_.Now() - entry.fetched_at < max_age_) return entry.answer;
  return nullptr;
}

Result<RecentAnswers::Answer> RecentAnswers::Get(const std::string& key, const Fetch& fetch) {
  std::shared_ptr<Entry> entry;
  {
    std::lock_guard lock(mu_);
    auto& slot = entries_[key];
    if (!slot) slot = std::make_shared<Entry>();
    entry = slot;
    if (Answer answer = Fresh(*entry)) return answer;
  }
  std::lock_guard one_fetch(entry->fetching);
  {
    std::lock_guard lock(mu_);
    if (Answer answer = Fresh(*entry)) return answer;  // fetched while this caller waited
    ++fetches_;
  }
  Result<std::string> fetched = fetch();
  if (!fetched.ok()) {
    std::lock_guard lock(mu_);
    auto it = entries_.find(key);
    if (it != entries_.end() && it->second == entry && !entry->answer) entries_.erase(it);
    return fetched.status();
  }
  Answer answer = std::make_shared<const std::string>(std::move(*fetched));
  Keep(key, entry, answer);
  return answer;
}

void RecentAnswers::Keep(const std::string& key, const std::shared_ptr<Entry>& entry,
                         Answer answer) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second != entry) return;  // dropped meanwhile: not kept
  if (entry->answer) bytes_ -= entry->answer->size();
  entry->answer = std::move(answer);
  entry->fetched_at = clock_.Now();
  bytes_ += entry->answer->size();
  // The least recently fetched answers go until the rest fit (this one stays, whatever its size).
  while (bytes_ > max_bytes_) {
    auto oldest = entries_.end();
    for (auto e = entries_.begin(); e != entries_.end(); ++e) {
      if (e->second == entry || !e->second->answer) continue;
      if (oldest == entries_.end() || e->second->fetched_at < oldest->second->fetched_at) {
        oldest = e;
      }
    }
    if (oldest == entries_.end()) break;
    bytes_ -= oldest->second->answer->size();
    entries_.erase(oldest);
  }
}

size_t RecentAnswers::bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

int64_t RecentAnswers::fetches() const {
  std::lock_guard lock(mu_);
  return fetches_;
}

}  // namespace det::master

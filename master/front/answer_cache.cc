#include "master/front/answer_cache.h"

#include <spdlog/spdlog.h>

#include "bus/event_subscriber.h"
#include "common/thread_name.h"

namespace det::master {

AnswerCache::AnswerCache(zmq::context_t& context, bus::EventBrokerEndpoints events,
                         Duration max_age, const Clock& clock)
    : context_(context), events_(std::move(events)), max_age_(max_age), clock_(clock) {}

AnswerCache::~AnswerCache() { Stop(); }

void AnswerCache::Add(const std::string& key, std::vector<std::string> prefixes, Fetch fetch) {
  auto entry = std::make_unique<Entry>();
  entry->prefixes = std::move(prefixes);
  entry->fetch = std::move(fetch);
  entries_[key] = std::move(entry);
}

void AnswerCache::Start() {
  listener_ = std::thread([this] { Listen(); });
}

void AnswerCache::Stop() {
  {
    std::lock_guard lock(wake_mu_);
    stop_ = true;
  }
  wake_.notify_one();
  if (listener_.joinable()) listener_.join();
}

Result<AnswerCache::Json> AnswerCache::Get(const std::string& key) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return NotFound("no cached answer " + key);
  Entry& entry = *it->second;
  uint64_t generation = 0;
  {
    std::lock_guard lock(entry.mu);
    const bool fresh = entry.json && entry.fetched_generation == entry.generation &&
                       clock_.Now() - entry.fetched_at < max_age_;
    if (fresh || (entry.fetching && entry.json)) return entry.json;
    entry.fetching = true;
    generation = entry.generation;
  }
  ++fetches_;
  Result<std::string> fetched = entry.fetch();
  std::lock_guard lock(entry.mu);
  entry.fetching = false;
  if (!fetched.ok()) {
    if (entry.json) return entry.json;  // the last answer beats none while an actor is slow
    return fetched.status();
  }
  entry.json = std::make_shared<const std::string>(std::move(*fetched));
  entry.fetched_at = clock_.Now();
  entry.fetched_generation = generation;
  {
    std::lock_guard wake_lock(wake_mu_);
    stored_ = true;
  }
  wake_.notify_one();
  return entry.json;
}

bool AnswerCache::AnyCurrent() {
  for (auto& [key, entry] : entries_) {
    std::lock_guard lock(entry->mu);
    if (entry->json && entry->fetched_generation == entry->generation) return true;
  }
  return false;
}

void AnswerCache::WaitForCurrentAnswer() {
  std::unique_lock lock(wake_mu_);
  wake_.wait_for(lock, std::chrono::milliseconds(100), [&] { return stored_ || stop_; });
  stored_ = false;
}

void AnswerCache::Touch(const std::string& type) {
  for (auto& [key, entry] : entries_) {
    for (const std::string& prefix : entry->prefixes) {
      if (!type.starts_with(prefix)) continue;
      std::lock_guard lock(entry->mu);
      ++entry->generation;
      break;
    }
  }
}

void AnswerCache::Listen() {
  NameThisThread("answer-cache");
  std::vector<std::string> prefixes;
  for (const auto& [key, entry] : entries_) {
    prefixes.insert(prefixes.end(), entry->prefixes.begin(), entry->prefixes.end());
  }
  bus::EventSubscriber subscriber(context_, "master-http-answers", events_, {},
                                  RealClock::Instance(), prefixes);
  if (Status started = subscriber.Start(); !started.ok()) {
    spdlog::warn("answer cache: cannot follow the event bus ({}): lists age by time alone",
                 started.message());
    return;
  }
  std::vector<bus::EventSubscriber::Update> updates;
  while (!stop_) {
    if (subscriber.synced()) following_ = true;
    if (subscriber.synced() && !AnyCurrent()) {
      WaitForCurrentAnswer();
      continue;
    }
    std::vector<zmq::pollitem_t> items;
    for (zmq::socket_t* s : subscriber.sockets()) items.push_back({s->handle(), 0, ZMQ_POLLIN, 0});
    bus::Poll(items.data(), items.size(), std::chrono::milliseconds(100));
    updates.clear();
    subscriber.Receive(&updates);
    subscriber.Tick(&updates);
    for (const auto& update : updates) {
      if (update.kind == bus::EventSubscriber::Update::Kind::kReset) {
        for (auto& [key, entry] : entries_) {
          std::lock_guard lock(entry->mu);
          ++entry->generation;
        }
      } else {
        ++events_read_;
        Touch(update.event.type);
      }
    }
  }
}

}  // namespace det::master

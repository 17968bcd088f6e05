#include "master/experiments/bucket_remover.h"

#include <spdlog/spdlog.h>

#include "common/thread_name.h"

namespace det::master {
namespace {
constexpr size_t kMaxStores = 32;
}  // namespace

BucketRemover::~BucketRemover() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void BucketRemover::Submit(Job job) {
  std::lock_guard lock(mu_);
  queue_.push_back(std::move(job));
  if (!thread_.joinable()) thread_ = std::thread([this] { Run(); });
  wake_.notify_all();
}

bool BucketRemover::Stopping() {
  std::lock_guard lock(mu_);
  return stopping_;
}

std::vector<BucketRemover::Done> BucketRemover::TakeDone() {
  std::lock_guard lock(mu_);
  return std::exchange(done_, {});
}

void BucketRemover::Run() {
  NameThisThread("bucket-remover");
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;  // queued jobs are redone from the database at the next start
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    Done done = Work(job);
    std::lock_guard lock(mu_);
    done_.push_back(std::move(done));
  }
}

object_store::ObjectStore* BucketRemover::StoreFor(const object_store::BucketSpec& spec,
                                                   Status* why) {
  const std::string key = spec.type + "\n" + spec.bucket + "\n" + spec.endpoint_url + "\n" +
                          spec.access_key + "\n" + spec.secret_key;
  auto it = stores_.find(key);
  if (it != stores_.end()) return it->second.get();
  // One client per bucket and credentials seen; a master that saw many keep only the latest.
  if (stores_.size() >= kMaxStores) stores_.clear();
  Result<std::unique_ptr<object_store::ObjectStore>> opened = open_(spec);
  if (!opened.ok()) {
    *why = opened.status();
    return nullptr;
  }
  return stores_.emplace(key, std::move(*opened)).first->second.get();
}

BucketRemover::Done BucketRemover::Work(const Job& job) {
  Done done{job.id, Status::Ok(), 0, 0};
  object_store::ObjectStore* store = StoreFor(job.bucket, &done.outcome);
  if (store == nullptr) return done;
  for (const std::string& prefix : job.key_prefixes) {
    if (Stopping()) {
      // The checkpoints left stay COMPLETED: the next master's collection removes them.
      done.outcome = Unavailable("the master is stopping");
      return done;
    }
    object_store::ObjectResult<std::vector<object_store::ObjectInfo>> listed = store->List(prefix);
    if (!listed.ok()) {
      done.outcome = Unavailable(listed.error().ToString());
      return done;
    }
    std::vector<std::string> keys;
    for (const object_store::ObjectInfo& object : *listed) {
      keys.push_back(object.key);
      done.bytes += object.size;
    }
    if (keys.empty()) continue;  // already gone (removed before a restart, or never written)
    object_store::ObjectResult<size_t> deleted = store->Delete(keys);
    if (!deleted.ok()) {
      done.outcome = Unavailable(deleted.error().ToString());
      return done;
    }
    done.objects += keys.size();
  }
  return done;
}

}  // namespace det::master

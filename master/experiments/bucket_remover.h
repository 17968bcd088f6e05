#pragma once

// Removes checkpoints kept in buckets (checkpoint_storage s3): each job lists the objects under
// its checkpoints' key prefixes and deletes them, on a thread of its own so that calls to the
// cloud (seconds, with retries) never hold the experiment service's thread. The checkpoint
// collector submits jobs and collects what they did at each poll.
//
// Threading: Submit and TakeDone may be called from any thread; the work runs on the remover's
// thread, started at the first Submit and stopped at destruction (the job under way ends at its
// next checkpoint; what it left is removed by the next master's collection).

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "object_store/open_bucket.h"

namespace det::master {

class BucketRemover {
 public:
  struct Job {
    std::string id;
    object_store::BucketSpec bucket;
    std::vector<std::string> key_prefixes;  // one per checkpoint: "<prefix>/<uuid>/"
  };
  struct Done {
    std::string id;
    Status outcome;  // Ok once every object under every prefix is gone
    size_t objects = 0;
    uint64_t bytes = 0;
  };
  using Opener = object_store::BucketOpener;

  explicit BucketRemover(Opener open = object_store::OpenBucket) : open_(std::move(open)) {}
  ~BucketRemover();
  BucketRemover(const BucketRemover&) = delete;
  BucketRemover& operator=(const BucketRemover&) = delete;

  void Submit(Job job);
  // The jobs that ended since the last call.
  std::vector<Done> TakeDone();

 private:
  void Run();
  Done Work(const Job& job);
  bool Stopping();  // the destructor is waiting: a job ends at its next prefix
  object_store::ObjectStore* StoreFor(const object_store::BucketSpec& spec, Status* why);

  Opener open_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Job> queue_;
  std::vector<Done> done_;
  bool stopping_ = false;
  std::thread thread_;
  // One client per bucket and credentials, kept for the next job (connections stay open). Only
  // the remover's thread touches them.
  std::map<std::string, std::unique_ptr<object_store::ObjectStore>> stores_;
};

}  // namespace det::master

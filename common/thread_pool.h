#pragma once

// A fixed number of threads that run posted jobs in the order posted (for handlers that may
// block: a gateway's slow methods). Jobs still queued when the pool is destroyed are run before
// the threads end.

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace det {

class ThreadPool {
 public:
  // `name`: each thread's (NameThisThread).
  ThreadPool(int threads, std::string name);
  ~ThreadPool();  // runs what is queued, then joins
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Thread-safe.
  void Post(std::function<void()> job);

 private:
  void Work();

  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace det

#include "common/thread_pool.h"

#include "common/thread_name.h"

namespace det {

ThreadPool::ThreadPool(int threads, std::string name) {
  for (int i = 0; i < threads; ++i) {
    threads_.emplace_back([this, name] {
      NameThisThread(name);
      Work();
    });
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

void ThreadPool::Post(std::function<void()> job) {
  {
    std::lock_guard lock(mu_);
    jobs_.push_back(std::move(job));
  }
  ready_.notify_one();
}

void ThreadPool::Work() {
  std::unique_lock lock(mu_);
  while (true) {
    ready_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, and nothing left to run
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    job();
    lock.lock();
  }
}

}  // namespace det

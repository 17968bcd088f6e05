#include "master/experiments/checkpoint_read_ahead.h"

#include <algorithm>
#include <system_error>

namespace det::master {

CheckpointReadAhead::CheckpointReadAhead(OpenReader open, const std::vector<CheckpointFile>& files,
                                         Options options)
    : open_(std::move(open)), parallel_(std::max(1, options.parallel)) {
  const uint64_t piece = std::max<uint64_t>(1, options.piece);
  for (size_t i = 0; i < files.size(); ++i) {
    paths_.push_back(files[i].path);
    for (uint64_t offset = 0; offset < files[i].size; offset += piece) {
      ranges_.push_back({i, offset, std::min(piece, files[i].size - offset)});
    }
  }
}

CheckpointReadAhead::~CheckpointReadAhead() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (std::thread& reader : readers_) reader.join();
}

// One reading thread: claims the next range while it is within `parallel_` of what was handed out,
// reads it, and keeps the bytes (or the error) for Next().
void CheckpointReadAhead::ReadLoop() {
  Result<std::unique_ptr<CheckpointFiles>> reader = Unavailable("no reader");
  try {
    reader = open_();
  } catch (const std::exception& e) {
    reader = Internal(std::string("opening a reader of the checkpoint's files: ") + e.what());
  }
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] {
      return stopping_ || claimed_ == ranges_.size() ||
             claimed_ < handed_out_ + static_cast<size_t>(parallel_);
    });
    if (stopping_ || claimed_ == ranges_.size()) return;
    const size_t index = claimed_++;
    const Range range = ranges_[index];
    std::string buffer;
    if (!spare_.empty()) {
      buffer = std::move(spare_.back());
      spare_.pop_back();
    }
    lock.unlock();
    Status read = reader.status();
    try {
      if (reader.ok()) {
        read = (*reader)->ReadInto(paths_[range.file], range.offset, range.length, buffer);
      }
    } catch (const std::exception& e) {  // out of memory, say: this piece fails, not the master
      read = Internal("reading " + paths_[range.file] + ": " + e.what());
    }
    lock.lock();
    read_.emplace(index, read.ok() ? Result<std::string>(std::move(buffer)) : read);
    changed_.notify_all();
    if (!reader.ok()) return;
  }
}

Result<CheckpointReadAhead::Piece> CheckpointReadAhead::Next() {
  std::unique_lock lock(mutex_);
  if (failed_ || handed_out_ == ranges_.size()) {
    return FailedPrecondition("the checkpoint's files were read to the end, or a read failed");
  }
  if (readers_.empty()) {
    const size_t threads = std::min(static_cast<size_t>(parallel_), ranges_.size());
    try {
      for (size_t i = 0; i < threads; ++i) readers_.emplace_back([this] { ReadLoop(); });
    } catch (const std::system_error& e) {  // no thread to be had: read with those there are
      if (readers_.empty()) {
        failed_ = true;
        return Unavailable(std::string("cannot start a thread to read the checkpoint: ") +
                           e.what());
      }
    }
  }
  const size_t index = handed_out_;
  changed_.wait(lock, [&] { return read_.count(index) > 0; });
  auto found = read_.find(index);
  Result<std::string> bytes = std::move(found->second);
  read_.erase(found);
  if (!bytes.ok()) {
    failed_ = true;
    return bytes.status();
  }
  ++handed_out_;
  changed_.notify_all();
  const Range& range = ranges_[index];
  return Piece{range.file, range.offset, range.length, std::move(*bytes)};
}

void CheckpointReadAhead::Recycle(std::string bytes) {
  std::lock_guard lock(mutex_);
  if (spare_.size() < 2) spare_.push_back(std::move(bytes));  // readers take them as they go
}

}  // namespace det::master

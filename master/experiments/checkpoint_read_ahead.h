#pragma once

// A checkpoint's files read ahead of whoever sends them (GET /checkpoints/{uuid}): up to
// `parallel` ranges of at most `piece` bytes at a time, each on a reader of its own (a bucket's
// client serves one thread), handed out in file order. A bucket's latency is then paid once per
// `parallel` pieces rather than once per piece, as `aws s3 cp` and boto3 read a large object. The
// reads run at most `parallel` pieces ahead of Next(), so memory stays at about
// (parallel + 1) x piece whatever the checkpoint's size.
//
// Threading: Next() from one thread at a time. The reading threads start at the first Next(); the
// destructor stops them and waits for the reads under way (at most one per reader).

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "master/experiments/checkpoint_files.h"

namespace det::master {

class CheckpointReadAhead {
 public:
  // A new reader of the checkpoint's files (one per reading thread).
  using OpenReader = std::function<Result<std::unique_ptr<CheckpointFiles>>()>;
  struct Options {
    uint64_t piece = 2 << 20;
    int parallel = 4;
  };
  struct Piece {
    size_t file = 0;      // its index in the files given
    uint64_t offset = 0;  // where in that file it starts
    uint64_t length = 0;  // how many bytes were asked for
    std::string bytes;    // as read: fewer than asked when the file is shorter than listed
  };

  // `files` as listed; those of 0 bytes have no piece.
  CheckpointReadAhead(OpenReader open, const std::vector<CheckpointFile>& files, Options options);
  ~CheckpointReadAhead();
  CheckpointReadAhead(const CheckpointReadAhead&) = delete;
  CheckpointReadAhead& operator=(const CheckpointReadAhead&) = delete;

  // The next piece in file order (waits for its read); FailedPrecondition after the last one, a
  // read's error when it failed (no later piece is handed out then).
  Result<Piece> Next();
  // A piece's bytes once used: their memory is read into again (a folder's reads), so a long
  // download does not map and fault in fresh memory for every piece. Thread-safe.
  void Recycle(std::string bytes);

 private:
  struct Range {
    size_t file;
    uint64_t offset;
    uint64_t length;
  };
  void ReadLoop();

  OpenReader open_;
  std::vector<std::string> paths_;
  std::vector<Range> ranges_;
  int parallel_;
  std::vector<std::thread> readers_;

  std::mutex mutex_;
  std::condition_variable changed_;
  size_t claimed_ = 0;                          // ranges a reader took
  size_t handed_out_ = 0;                       // ranges Next() returned
  std::map<size_t, Result<std::string>> read_;  // range -> its bytes, until handed out
  std::vector<std::string> spare_;              // recycled buffers
  bool stopping_ = false;
  bool failed_ = false;
};

}  // namespace det::master

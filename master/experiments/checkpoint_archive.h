#pragma once

// A checkpoint's files as one gzipped tar (its blocks stored, not compressed: weights barely
// compress), made piece by piece as its reader asks: what GET /checkpoints/{uuid} streams
// (Determined's SDK extracts it with Python's tarfile). Entries are named by their path in the
// checkpoint, in the order listed; the files are read ahead in pieces, several at a time
// (CheckpointReadAhead), so memory stays at a few pieces whatever the checkpoint's size.
//
// Threading: one caller at a time (the HTTP server's workers take turns).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "master/experiments/checkpoint_files.h"
#include "master/experiments/checkpoint_read_ahead.h"

struct archive;

namespace det::master {

class CheckpointArchive {
 public:
  // `files` as a reader listed them at `where` (for messages); `open` makes the readers.
  CheckpointArchive(std::string where, CheckpointReadAhead::OpenReader open,
                    std::vector<CheckpointFile> files, CheckpointReadAhead::Options options = {});
  ~CheckpointArchive();
  CheckpointArchive(const CheckpointArchive&) = delete;
  CheckpointArchive& operator=(const CheckpointArchive&) = delete;

  struct Piece {
    std::string data;   // compressed bytes ("" while the compressor holds them back)
    bool done = false;  // the archive ends with `data`
  };
  // The next piece. An error when a file cannot be read or is no longer the size it was listed
  // with; the archive is then unfinished, and whoever sends it must not end it as if complete
  // (a client that got all but the end must see a broken transfer, never a shorter checkpoint).
  Result<Piece> Next();
  // A piece's data once sent: the next piece is written into its memory. Called between Next()s.
  void Recycle(std::string data) { spare_ = std::move(data); }

 private:
  Status StartArchive();
  Status WriteNextPiece();
  Status Failed(const std::string& what);

  std::string where_;
  std::vector<CheckpointFile> files_;
  CheckpointReadAhead read_ahead_;
  archive* out_ = nullptr;
  std::string pending_;  // compressed bytes not yet handed out
  std::string spare_;    // a piece's memory, sent and given back
  size_t file_ = 0;      // the file being written
  uint64_t offset_ = 0;  // of it, written so far
  bool entry_open_ = false;
  bool done_ = false;
};

}  // namespace det::master

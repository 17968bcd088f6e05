#pragma once

// A checkpoint's files as one gzipped tar (its blocks stored, not compressed: weights barely
// compress), made piece by piece as its reader asks: what GET /checkpoints/{uuid} streams
// (Determined's SDK extracts it with Python's tarfile). Entries are named by their path in the
// checkpoint, in the order listed; each file is read in pieces of at most kReadPiece bytes, so
// memory stays at about a piece whatever the checkpoint's size.
//
// Threading: one caller at a time (the HTTP server's workers take turns).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "master/experiments/checkpoint_files.h"

struct archive;

namespace det::master {

class CheckpointArchive {
 public:
  static constexpr uint64_t kReadPiece = 1 << 20;

  // `files` as `reader` listed them.
  CheckpointArchive(std::unique_ptr<CheckpointFiles> reader, std::vector<CheckpointFile> files);
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

 private:
  Status StartArchive();
  Status WriteNextPiece();
  Status Failed(const std::string& what);

  std::unique_ptr<CheckpointFiles> reader_;
  std::vector<CheckpointFile> files_;
  archive* out_ = nullptr;
  std::string pending_;  // compressed bytes not yet handed out
  size_t file_ = 0;      // the file being written
  uint64_t offset_ = 0;  // of it, written so far
  bool entry_open_ = false;
  bool done_ = false;
};

}  // namespace det::master

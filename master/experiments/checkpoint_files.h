#pragma once

// A checkpoint's files where its storage keeps them, listed and read piece by piece, never whole:
// what the master streams when a user downloads a checkpoint through it (GET /checkpoints/{uuid}).
//   shared_fs  the folder host_path[/storage_path]/<uuid> as the master's host sees it (it must
//              mount host_path; otherwise NotFound says to download where it is mounted)
//   s3, gcs    the objects under <prefix>/<uuid>/ (the layout Determined's storage managers
//              write), read with the experiment's keys when it gives them, else the master's
//
// Threading: one reader per thread (the bucket clients are not thread-safe).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "master/experiments/experiment/experiment_config.h"
#include "object_store/open_bucket.h"

namespace det::master {

struct CheckpointFile {
  std::string path;  // relative to the checkpoint, '/'-separated ("model/state.pt")
  uint64_t size = 0;
};

class CheckpointFiles {
 public:
  virtual ~CheckpointFiles() = default;
  // Every file, by path. NotFound when the checkpoint has none here.
  virtual Result<std::vector<CheckpointFile>> List() = 0;
  // At most `length` bytes of `path` from `offset` ("" at or past its end).
  virtual Result<std::string> Read(const std::string& path, uint64_t offset, uint64_t length) = 0;
  // The same into `into`, whose memory a reader of files reuses (a bucket's reader replaces it).
  virtual Status ReadInto(const std::string& path, uint64_t offset, uint64_t length,
                          std::string& into) {
    Result<std::string> piece = Read(path, offset, length);
    if (!piece.ok()) return piece.status();
    into = std::move(*piece);
    return Status::Ok();
  }
  // Where the files are, for messages: "/mnt/ckpt/<uuid>", "s3://bucket/prefix/<uuid>/".
  virtual std::string Where() const = 0;
};

// The checkpoint_storage of an experiment's stored config (master.yaml's defaults were merged in
// when it was created); InvalidArgument when the text does not read.
Result<experiment::CheckpointStorage> CheckpointStorageOf(const std::string& config_yaml);

// The reader of checkpoint `uuid` kept in `storage`; InvalidArgument for a storage type the master
// cannot read, and the bucket's error when it cannot be opened.
Result<std::unique_ptr<CheckpointFiles>> OpenCheckpointFiles(
    const experiment::CheckpointStorage& storage, const std::string& uuid,
    const object_store::BucketOpener& open = object_store::OpenBucket);

}  // namespace det::master

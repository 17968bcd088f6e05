#include "master/experiments/checkpoint_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <system_error>

#include "master/experiments/trial_launch.h"
#include "object_store/checkpoint_keys.h"

namespace det::master {
namespace {

namespace fs = std::filesystem;

class FolderFiles : public CheckpointFiles {
 public:
  explicit FolderFiles(fs::path root) : root_(std::move(root)) {}

  Result<std::vector<CheckpointFile>> List() override {
    std::error_code ec;
    if (!fs::is_directory(root_, ec)) {
      return NotFound("no folder " + root_.string() +
                      " on the master's host: the master reads shared_fs checkpoints where it "
                      "mounts host_path; download with mode DIRECT on a host that mounts it");
    }
    std::vector<CheckpointFile> files;
    // Links are left out: trial code wrote the folder, and a link could point at any file the
    // master may read.
    for (fs::recursive_directory_iterator it(root_, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->is_symlink(ec) || !it->is_regular_file(ec)) continue;
      files.push_back({fs::relative(it->path(), root_).generic_string(), it->file_size(ec)});
    }
    if (ec) return Unavailable("cannot list " + root_.string() + ": " + ec.message());
    std::sort(files.begin(), files.end(),
              [](const CheckpointFile& a, const CheckpointFile& b) { return a.path < b.path; });
    return files;
  }

  // A listed file, opened without following a link (one put in its place since the listing is
  // refused) and only as a regular file.
  Result<std::string> Read(const std::string& path, uint64_t offset, uint64_t length) override {
    std::string piece;
    DET_RETURN_IF_ERROR(ReadInto(path, offset, length, piece));
    return piece;
  }

  Status ReadInto(const std::string& path, uint64_t offset, uint64_t length,
                  std::string& into) override {
    const fs::path file = root_ / path;
    const int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      if (fd >= 0) ::close(fd);
      return Unavailable("cannot read " + file.string() + " as a regular file");
    }
    into.resize(length);
    size_t got = 0;
    while (got < length) {
      const ssize_t n =
          ::pread(fd, into.data() + got, length - got, static_cast<off_t>(offset + got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    ::close(fd);
    into.resize(got);
    return Status::Ok();
  }

  std::string Where() const override { return root_.string(); }

 private:
  fs::path root_;
};

// A bucket's refusal as the download reports it: missing objects are NotFound, a refusal of the
// master's or the experiment's credentials (which the user cannot mend by asking again) Internal,
// what may pass (throttling, 5xx, transport) Unavailable.
Status StatusOf(const object_store::ObjectStoreError& error) {
  switch (error.kind) {
    case CloudErrorKind::kNotFound:
      return NotFound(error.ToString());
    case CloudErrorKind::kThrottled:
    case CloudErrorKind::kTransient:
      return Unavailable(error.ToString());
    default:
      return Internal(error.ToString());
  }
}

class BucketFiles : public CheckpointFiles {
 public:
  BucketFiles(std::unique_ptr<object_store::ObjectStore> store, std::string type,
              std::string key_prefix)
      : store_(std::move(store)), type_(std::move(type)), key_prefix_(std::move(key_prefix)) {}

  Result<std::vector<CheckpointFile>> List() override {
    auto objects = store_->List(key_prefix_);
    if (!objects.ok()) return StatusOf(objects.error());
    std::vector<CheckpointFile> files;
    for (const object_store::ObjectInfo& object : *objects) {
      std::string path = object.key.substr(key_prefix_.size());
      if (path.empty() || path.ends_with('/')) continue;  // a folder's marker object
      // A key no archive may name: it would be extracted outside the client's folder.
      if (path.front() == '/' || ("/" + path + "/").find("/../") != std::string::npos) continue;
      files.push_back({std::move(path), object.size});
    }
    if (files.empty()) return NotFound("no objects under " + Where());
    return files;
  }

  Result<std::string> Read(const std::string& path, uint64_t offset, uint64_t length) override {
    auto piece = store_->ReadRange(key_prefix_ + path, offset, length);
    if (!piece.ok()) return StatusOf(piece.error());
    return std::move(*piece);
  }

  std::string Where() const override {
    return type_ + "://" + store_->bucket() + "/" + key_prefix_;
  }

 private:
  std::unique_ptr<object_store::ObjectStore> store_;
  std::string type_;
  std::string key_prefix_;
};

}  // namespace

Result<experiment::CheckpointStorage> CheckpointStorageOf(const std::string& config_yaml) {
  DET_ASSIGN_OR_RETURN(experiment::ExperimentConfig config,
                       experiment::ParseExperimentConfigText(config_yaml));
  return config.checkpoint_storage;
}

Result<std::unique_ptr<CheckpointFiles>> OpenCheckpointFiles(
    const experiment::CheckpointStorage& storage, const std::string& uuid,
    const object_store::BucketOpener& open) {
  if (uuid.empty() || uuid.find('/') != std::string::npos || uuid.find("..") != std::string::npos) {
    return InvalidArgument("checkpoint uuid " + uuid + ": not a checkpoint's uuid");
  }
  if (storage.type == "shared_fs") {
    return std::unique_ptr<CheckpointFiles>(
        std::make_unique<FolderFiles>(fs::path(CheckpointRoot(storage)) / uuid));
  }
  if (!storage.IsObjectStore()) {
    return InvalidArgument("checkpoint_storage type " + storage.type +
                           ": the master cannot read it");
  }
  DET_ASSIGN_OR_RETURN(std::unique_ptr<object_store::ObjectStore> store,
                       open({storage.type, storage.bucket, storage.access_key, storage.secret_key,
                             storage.endpoint_url}));
  return std::unique_ptr<CheckpointFiles>(std::make_unique<BucketFiles>(
      std::move(store), storage.type, object_store::CheckpointKeyPrefix(storage.prefix, uuid)));
}

}  // namespace det::master

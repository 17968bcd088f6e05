// GET /checkpoints/{uuid}: a checkpoint's files streamed through the master as a gzipped tar
// (Determined's path, outside /api/v1: its SDK's Checkpoint.download with mode MASTER, and AUTO's
// fallback when the client cannot read the storage itself; `det checkpoint download --mode
// master`). For a logged-in user (Authorization: Bearer), whatever the storage (shared_fs where
// the master's host mounts it, s3, gcs), with the master's credentials or the experiment's keys:
// a laptop needs none of its own. Errors before the first byte are Determined's JSON errors (401,
// 404 for an unknown checkpoint or one with no files where its storage keeps them, 400 for a
// deleted one, 500 when the storage refuses the keys used (naming the permission), 503 when it is
// out of reach); one after it breaks the connection off (CheckpointArchive says why), so no client
// mistakes a part for the whole.

#include <spdlog/spdlog.h>

#include <atomic>
#include <mutex>

#include "bus/catalog/experiments.h"
#include "master/experiments/checkpoint_archive.h"
#include "master/front/http/core_routes.h"
#include "master/front/http/json.h"
#include "master/front/http/user_routes.h"

namespace det::master::http {
namespace {

// At most this many downloads at once: each holds a read-ahead's four threads and about 20 MiB of
// pieces, so the master's memory stays bounded whatever the number of clients; one more is told to
// try again (503).
constexpr int kMaxDownloads = 16;

class ArchiveBody : public BodySource {
 public:
  // `downloads`: counted up by the caller; counted down when the body goes.
  ArchiveBody(std::unique_ptr<CheckpointArchive> archive, std::string uuid,
              std::shared_ptr<std::atomic<int>> downloads)
      : archive_(std::move(archive)), uuid_(std::move(uuid)), downloads_(std::move(downloads)) {}
  ~ArchiveBody() override {
    archive_.reset();  // its readers stopped first
    --*downloads_;
  }

  Piece Next() override {
    {
      std::lock_guard lock(mutex_);
      if (!spare_.empty()) archive_->Recycle(std::move(spare_));
      spare_.clear();
    }
    Result<CheckpointArchive::Piece> piece = Internal("no piece");
    try {
      piece = archive_->Next();
    } catch (const std::exception& e) {  // never the session's error line: that would end the body
      piece = Internal(e.what());
    }
    if (!piece.ok()) {
      spdlog::warn("download of checkpoint {} broken off: {}", uuid_, piece.status().message());
      return {"", false, true};
    }
    return {std::move(piece->data), piece->done};
  }

  void Recycle(std::string written) override {
    std::lock_guard lock(mutex_);
    spare_ = std::move(written);
  }

 private:
  std::unique_ptr<CheckpointArchive> archive_;
  std::string uuid_;
  std::shared_ptr<std::atomic<int>> downloads_;
  std::mutex mutex_;   // Recycle (the connection's thread) against Next (a worker)
  std::string spare_;  // a piece written, for the archive to write the next one into
};

}  // namespace

Result<std::shared_ptr<BodySource>> TrialRoutes::CheckpointDownload(const Request& req,
                                                                    const std::string& uuid) {
  DET_ASSIGN_OR_RETURN(auth::Principal user, UserOf(front_.calls.users(), req));
  DET_ASSIGN_OR_RETURN(std::string config, DownloadableConfig(user, uuid));
  DET_ASSIGN_OR_RETURN(experiment::CheckpointStorage storage, CheckpointStorageOf(config));
  DET_ASSIGN_OR_RETURN(std::unique_ptr<CheckpointFiles> reader, OpenCheckpointFiles(storage, uuid));
  Result<std::vector<CheckpointFile>> files = reader->List();
  if (!files.ok()) return files.status().WithContext("checkpoint " + uuid);
  spdlog::info("{} downloads checkpoint {} ({} files) from {}", user.username, uuid, files->size(),
               reader->Where());
  if (++*downloads_ > kMaxDownloads) {
    --*downloads_;
    return Unavailable(std::to_string(kMaxDownloads) +
                       " checkpoint downloads are under way, the most the master serves at once: "
                       "try again when one has ended");
  }
  // Each reading thread opens its own reader, as this one was opened.
  auto open = [storage, uuid] { return OpenCheckpointFiles(storage, uuid); };
  return std::shared_ptr<BodySource>(std::make_shared<ArchiveBody>(
      std::make_unique<CheckpointArchive>(reader->Where(), std::move(open), std::move(*files)),
      uuid, downloads_));
}

Result<std::string> TrialRoutes::DownloadableConfig(const auth::Principal& user,
                                                    const std::string& uuid) {
  auto found = reports_.AnyCheckpoint(uuid);
  if (found.status().code() == StatusCode::kNotFound) {
    DET_ASSIGN_OR_RETURN(auto registered, front_.models.Registered(uuid));
    if (!registered) return found.status();
    auto kept = nlohmann::json::parse(registered->storage_json, nullptr, false);
    if (!kept.is_object() || !kept.contains("config") || !kept["config"].is_string()) {
      return Internal("checkpoint " + uuid + ": its model version keeps no config to read it by");
    }
    return kept["config"].get<std::string>();
  }
  DET_RETURN_IF_ERROR(found.status());
  const auto& [checkpoint, experiment_id] = *found;
  if (checkpoint.state == "DELETED") {
    return InvalidArgument("checkpoint " + uuid + " was deleted: there are no files to download");
  }
  // The user may see the experiment (the call checks); its storage's keys come from the stored
  // config, which the answer shows redacted.
  DET_RETURN_IF_ERROR(front_.calls.Call(user, bus::ExperimentGetRequest{experiment_id}).status());
  return reports_.StoredConfig(experiment_id);
}

void TrialRoutes::RouteCheckpointDownload(Router& router) {
  router.Get("/checkpoints/{checkpoint_uuid}", [this](const Request& req, Response& res) {
    Result<std::shared_ptr<BodySource>> body = CheckpointDownload(req, req.Match(1));
    if (!body.ok()) {
      spdlog::info("download of checkpoint {} refused: {}", req.Match(1), body.status().ToString());
      return Reply(res, body.status());
    }
    res.SetHeader("Content-Disposition", "attachment; filename=\"" + req.Match(1) + ".tar.gz\"");
    res.Stream("application/gzip", std::move(*body));
  });
}

}  // namespace det::master::http

#include "master/experiments/model_files.h"

#include <archive.h>
#include <archive_entry.h>

#include <algorithm>
#include <memory>

namespace det::master::experiments {
namespace {

struct ArchiveCloser {
  void operator()(archive* a) const {
    if (a != nullptr) archive_write_free(a);
  }
};
struct ReaderCloser {
  void operator()(archive* a) const {
    if (a != nullptr) archive_read_free(a);
  }
};
struct EntryCloser {
  void operator()(archive_entry* e) const {
    if (e != nullptr) archive_entry_free(e);
  }
};

// Where the archive's bytes go, and whether they passed the limit.
struct Sink {
  std::string bytes;
  int64_t max_bytes = 0;
  bool too_large = false;
};

la_ssize_t Append(archive*, void* data, const void* buffer, size_t length) {
  auto* sink = static_cast<Sink*>(data);
  if (static_cast<int64_t>(sink->bytes.size() + length) > sink->max_bytes) {
    sink->too_large = true;
    return -1;
  }
  sink->bytes.append(static_cast<const char*>(buffer), length);
  return static_cast<la_ssize_t>(length);
}

Status CheckPath(const std::string& path) {
  if (path.empty()) return InvalidArgument("modelDefinition: a file has no path");
  if (path.front() == '/') {
    return InvalidArgument("modelDefinition: \"" + path + "\" is absolute");
  }
  size_t start = 0;
  while (start <= path.size()) {
    const size_t end = std::min(path.find('/', start), path.size());
    if (path.compare(start, end - start, "..") == 0 && end - start == 2) {
      return InvalidArgument("modelDefinition: \"" + path + "\" leaves its folder (..)");
    }
    start = end + 1;
  }
  return Status::Ok();
}

Status Failed(archive* a, const std::string& what) {
  const char* why = archive_error_string(a);
  return InvalidArgument(what + ": " + (why != nullptr ? why : "libarchive failed"));
}

}  // namespace

Result<std::string> PackModelFiles(const std::vector<ModelFile>& files, int64_t max_bytes) {
  for (const ModelFile& file : files) DET_RETURN_IF_ERROR(CheckPath(file.path));
  Sink sink{"", max_bytes, false};
  std::unique_ptr<archive, ArchiveCloser> out(archive_write_new());
  if (!out) return Internal("libarchive: cannot make an archive");
  if (archive_write_set_format_pax_restricted(out.get()) != ARCHIVE_OK ||
      archive_write_add_filter_gzip(out.get()) != ARCHIVE_OK ||
      archive_write_open(out.get(), &sink, nullptr, &Append, nullptr) != ARCHIVE_OK) {
    return Failed(out.get(), "modelDefinition");
  }
  for (const ModelFile& file : files) {
    std::unique_ptr<archive_entry, EntryCloser> entry(archive_entry_new());
    archive_entry_set_pathname(entry.get(), file.path.c_str());
    archive_entry_set_filetype(entry.get(), file.is_dir ? AE_IFDIR : AE_IFREG);
    archive_entry_set_perm(entry.get(), file.mode & 07777);
    archive_entry_set_mtime(entry.get(), file.mtime, 0);
    archive_entry_set_size(entry.get(),
                           file.is_dir ? 0 : static_cast<la_int64_t>(file.content.size()));
    if (archive_write_header(out.get(), entry.get()) != ARCHIVE_OK ||
        (!file.is_dir && !file.content.empty() &&
         archive_write_data(out.get(), file.content.data(), file.content.size()) < 0)) {
      if (sink.too_large) break;
      return Failed(out.get(), "modelDefinition: " + file.path);
    }
  }
  if (!sink.too_large && archive_write_close(out.get()) != ARCHIVE_OK && !sink.too_large) {
    return Failed(out.get(), "modelDefinition");
  }
  if (sink.too_large) {
    const std::string limit = max_bytes >= (1 << 20) && max_bytes % (1 << 20) == 0
                                  ? std::to_string(max_bytes >> 20) + " MiB"
                                  : std::to_string(max_bytes) + " bytes";
    return InvalidArgument("modelDefinition: the files pass " + limit + " packed");
  }
  return std::move(sink.bytes);
}

Result<std::vector<ModelFile>> ReadModelFiles(const std::string& tar_gz, bool with_content) {
  std::unique_ptr<archive, ReaderCloser> in(archive_read_new());
  if (!in) return Internal("libarchive: cannot read an archive");
  archive_read_support_filter_all(in.get());
  archive_read_support_format_tar(in.get());
  if (archive_read_open_memory(in.get(), tar_gz.data(), tar_gz.size()) != ARCHIVE_OK) {
    return Failed(in.get(), "model definition");
  }
  std::vector<ModelFile> files;
  archive_entry* entry = nullptr;
  int rc = ARCHIVE_OK;
  while ((rc = archive_read_next_header(in.get(), &entry)) == ARCHIVE_OK) {
    ModelFile file;
    const char* path = archive_entry_pathname(entry);
    file.path = path != nullptr ? path : "";
    while (file.path.starts_with("./")) file.path.erase(0, 2);
    while (file.path.ends_with('/')) file.path.pop_back();
    file.is_dir = archive_entry_filetype(entry) == AE_IFDIR;
    file.mode = archive_entry_perm(entry);
    file.mtime = archive_entry_mtime(entry);
    file.size = file.is_dir ? 0 : std::max<int64_t>(archive_entry_size(entry), 0);
    if (with_content && file.size > 0) {
      file.content.resize(static_cast<size_t>(file.size));
      if (archive_read_data(in.get(), file.content.data(), file.content.size()) != file.size) {
        return Failed(in.get(), "model definition: " + file.path);
      }
    }
    files.push_back(std::move(file));
  }
  if (rc != ARCHIVE_EOF) return Failed(in.get(), "model definition");
  return files;
}

}  // namespace det::master::experiments

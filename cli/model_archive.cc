#include "cli/model_archive.h"

#include <archive.h>
#include <archive_entry.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

namespace det::cli {
namespace {

namespace fs = std::filesystem;

struct ArchiveCloser {
  void operator()(archive* a) const { archive_write_free(a); }
};

bool LeftOut(const fs::path& relative) {
  for (const auto& part : relative) {
    if (part == ".git" || part == "__pycache__") return true;
  }
  return false;
}

Status AddFile(archive* out, const fs::path& file, const std::string& name) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return InvalidArgument("model definition: cannot read " + file.string());
  std::ostringstream content;
  content << in.rdbuf();
  const std::string data = content.str();
  std::unique_ptr<archive_entry, decltype(&archive_entry_free)> entry(archive_entry_new(),
                                                                      &archive_entry_free);
  archive_entry_set_pathname(entry.get(), name.c_str());
  archive_entry_set_filetype(entry.get(), AE_IFREG);
  archive_entry_set_perm(
      entry.get(),
      0644 |
          ((fs::status(file).permissions() & fs::perms::owner_exec) != fs::perms::none ? 0111 : 0));
  archive_entry_set_size(entry.get(), static_cast<la_int64_t>(data.size()));
  if (archive_write_header(out, entry.get()) != ARCHIVE_OK ||
      archive_write_data(out, data.data(), data.size()) != static_cast<la_ssize_t>(data.size())) {
    return InvalidArgument("model definition: " + std::string(archive_error_string(out)));
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> PackModelDefinition(const std::string& folder, int64_t max_bytes) {
  std::error_code error;
  if (!fs::is_directory(folder, error)) {
    return InvalidArgument("model definition: " + folder + " is not a folder");
  }
  // Generous room: libarchive refuses to write past the buffer, which we report as too large.
  std::string buffer(static_cast<size_t>(max_bytes) + 1, '\0');
  size_t used = 0;
  std::unique_ptr<archive, ArchiveCloser> out(archive_write_new());
  archive_write_set_format_pax_restricted(out.get());
  archive_write_add_filter_gzip(out.get());
  if (archive_write_open_memory(out.get(), buffer.data(), buffer.size(), &used) != ARCHIVE_OK) {
    return Internal("model definition: " + std::string(archive_error_string(out.get())));
  }
  for (auto it = fs::recursive_directory_iterator(folder, error);
       !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    const fs::path relative = fs::relative(it->path(), folder);
    if (LeftOut(relative)) {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file()) continue;
    Status added = AddFile(out.get(), it->path(), relative.generic_string());
    if (!added.ok()) {
      if (used + 1 >= buffer.size()) break;
      return added;
    }
  }
  if (error)
    return InvalidArgument("model definition: cannot read " + folder + ": " + error.message());
  const bool closed = archive_write_close(out.get()) == ARCHIVE_OK;
  if (!closed || used >= buffer.size()) {
    return InvalidArgument("model definition: " + folder + " is more than " +
                           std::to_string(max_bytes >> 20) +
                           " MiB compressed; leave data sets and outputs out of it");
  }
  buffer.resize(used);
  return buffer;
}

}  // namespace det::cli

#include "cli/model_archive.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "cli/libarchive_loader.h"

namespace det::cli {
namespace {

namespace fs = std::filesystem;

bool LeftOut(const fs::path& relative) {
  for (const auto& part : relative) {
    if (part == ".git" || part == "__pycache__") return true;
  }
  return false;
}

Status AddFile(const LibArchive& lib, archive* out, const fs::path& file, const std::string& name) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return InvalidArgument("model definition: cannot read " + file.string());
  std::ostringstream content;
  content << in.rdbuf();
  const std::string data = content.str();
  std::unique_ptr<archive_entry, void (*)(archive_entry*)> entry(lib.entry_new(), lib.entry_free);
  lib.entry_set_pathname(entry.get(), name.c_str());
  lib.entry_set_filetype(entry.get(), AE_IFREG);
  lib.entry_set_perm(
      entry.get(),
      0644 |
          ((fs::status(file).permissions() & fs::perms::owner_exec) != fs::perms::none ? 0111 : 0));
  lib.entry_set_size(entry.get(), static_cast<la_int64_t>(data.size()));
  if (lib.write_header(out, entry.get()) != ARCHIVE_OK ||
      lib.write_data(out, data.data(), data.size()) != static_cast<la_ssize_t>(data.size())) {
    return InvalidArgument("model definition: " + std::string(lib.error_string(out)));
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
  DET_ASSIGN_OR_RETURN(const LibArchive* lib, OpenLibArchive());
  std::unique_ptr<archive, int (*)(archive*)> out(lib->write_new(), lib->write_free);
  lib->write_set_format_pax_restricted(out.get());
  lib->write_add_filter_gzip(out.get());
  if (lib->write_open_memory(out.get(), buffer.data(), buffer.size(), &used) != ARCHIVE_OK) {
    return Internal("model definition: " + std::string(lib->error_string(out.get())));
  }
  for (auto it = fs::recursive_directory_iterator(folder, error);
       !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    const fs::path relative = fs::relative(it->path(), folder);
    if (LeftOut(relative)) {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file()) continue;
    Status added = AddFile(*lib, out.get(), it->path(), relative.generic_string());
    if (!added.ok()) {
      if (used + 1 >= buffer.size()) break;
      return added;
    }
  }
  if (error)
    return InvalidArgument("model definition: cannot read " + folder + ": " + error.message());
  const bool closed = lib->write_close(out.get()) == ARCHIVE_OK;
  if (!closed || used >= buffer.size()) {
    return InvalidArgument("model definition: " + folder + " is more than " +
                           std::to_string(max_bytes >> 20) +
                           " MiB compressed; leave data sets and outputs out of it");
  }
  buffer.resize(used);
  return buffer;
}

}  // namespace det::cli

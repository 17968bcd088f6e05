#include "cli/libarchive_loader.h"

#include "cli/shared_library.h"

namespace det::cli {
namespace {

constexpr const char* kLibrary = "libarchive.so.13";

Result<LibArchive> Open() {
  DET_ASSIGN_OR_RETURN(void* library,
                       OpenSharedLibrary(kLibrary, "packing a model definition", "libarchive13"));
  LibArchive lib{};
  const bool found =
      FindSymbol(library, "archive_write_new", &lib.write_new) &&
      FindSymbol(library, "archive_write_free", &lib.write_free) &&
      FindSymbol(library, "archive_write_set_format_pax_restricted",
                 &lib.write_set_format_pax_restricted) &&
      FindSymbol(library, "archive_write_add_filter_gzip", &lib.write_add_filter_gzip) &&
      FindSymbol(library, "archive_write_open_memory", &lib.write_open_memory) &&
      FindSymbol(library, "archive_write_header", &lib.write_header) &&
      FindSymbol(library, "archive_write_data", &lib.write_data) &&
      FindSymbol(library, "archive_write_close", &lib.write_close) &&
      FindSymbol(library, "archive_error_string", &lib.error_string) &&
      FindSymbol(library, "archive_entry_new", &lib.entry_new) &&
      FindSymbol(library, "archive_entry_free", &lib.entry_free) &&
      FindSymbol(library, "archive_entry_set_pathname", &lib.entry_set_pathname) &&
      FindSymbol(library, "archive_entry_set_filetype", &lib.entry_set_filetype) &&
      FindSymbol(library, "archive_entry_set_perm", &lib.entry_set_perm) &&
      FindSymbol(library, "archive_entry_set_size", &lib.entry_set_size);
  if (!found) return MissingSymbol(kLibrary);
  return lib;  // the library stays open for the rest of the process
}

}  // namespace

Result<const LibArchive*> OpenLibArchive() {
  static const Result<LibArchive> lib = Open();
  if (!lib.ok()) return lib.status();
  return &*lib;
}

}  // namespace det::cli

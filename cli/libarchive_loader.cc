#include "cli/libarchive_loader.h"

#include <dlfcn.h>

#include <string>

namespace det::cli {
namespace {

constexpr const char* kLibrary = "libarchive.so.13";

template <class F>
bool Find(void* library, const char* name, F* function) {
  *function = reinterpret_cast<F>(::dlsym(library, name));
  return *function != nullptr;
}

Result<LibArchive> Open() {
  void* library = ::dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = ::dlerror();
    return FailedPrecondition(std::string("cannot open ") + kLibrary +
                              " (install libarchive13): " + (why ? why : "unknown error"));
  }
  LibArchive lib{};
  const bool found = Find(library, "archive_write_new", &lib.write_new) &&
                     Find(library, "archive_write_free", &lib.write_free) &&
                     Find(library, "archive_write_set_format_pax_restricted",
                          &lib.write_set_format_pax_restricted) &&
                     Find(library, "archive_write_add_filter_gzip", &lib.write_add_filter_gzip) &&
                     Find(library, "archive_write_open_memory", &lib.write_open_memory) &&
                     Find(library, "archive_write_header", &lib.write_header) &&
                     Find(library, "archive_write_data", &lib.write_data) &&
                     Find(library, "archive_write_close", &lib.write_close) &&
                     Find(library, "archive_error_string", &lib.error_string) &&
                     Find(library, "archive_entry_new", &lib.entry_new) &&
                     Find(library, "archive_entry_free", &lib.entry_free) &&
                     Find(library, "archive_entry_set_pathname", &lib.entry_set_pathname) &&
                     Find(library, "archive_entry_set_filetype", &lib.entry_set_filetype) &&
                     Find(library, "archive_entry_set_perm", &lib.entry_set_perm) &&
                     Find(library, "archive_entry_set_size", &lib.entry_set_size);
  if (!found) {
    return FailedPrecondition(std::string(kLibrary) + " lacks a call det needs: " + ::dlerror());
  }
  return lib;  // the library stays open for the rest of the process
}

}  // namespace

Result<const LibArchive*> OpenLibArchive() {
  static const Result<LibArchive> lib = Open();
  if (!lib.ok()) return lib.status();
  return &*lib;
}

}  // namespace det::cli

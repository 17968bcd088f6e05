#pragma once

// libarchive, opened when a command first needs it (packing a model definition) rather than
// loaded with det: a `det cmd run` then loads no archive, compression or XML library at all.

#include <archive.h>
#include <archive_entry.h>

#include "common/status.h"

namespace det::cli {

// The libarchive calls det makes, by their C names without the `archive_` prefix.
struct LibArchive {
  archive* (*write_new)();
  int (*write_free)(archive*);
  int (*write_set_format_pax_restricted)(archive*);
  int (*write_add_filter_gzip)(archive*);
  int (*write_open_memory)(archive*, void*, size_t, size_t*);
  int (*write_header)(archive*, archive_entry*);
  la_ssize_t (*write_data)(archive*, const void*, size_t);
  int (*write_close)(archive*);
  const char* (*error_string)(archive*);
  archive_entry* (*entry_new)();
  void (*entry_free)(archive_entry*);
  void (*entry_set_pathname)(archive_entry*, const char*);
  void (*entry_set_filetype)(archive_entry*, unsigned int);
  void (*entry_set_perm)(archive_entry*, mode_t);
  void (*entry_set_size)(archive_entry*, la_int64_t);
};

// libarchive's shared library (libarchive.so.13, Debian's libarchive13), opened once and kept
// open; FailedPrecondition naming the library or the missing call when it cannot be. Thread-safe.
Result<const LibArchive*> OpenLibArchive();

}  // namespace det::cli

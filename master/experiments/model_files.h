#pragma once

// A model definition as Determined's clients send and read it (a list of files: its CLI's and
// SDK's `modelDefinition`, GetModelDef's tarball, GetModelDefTree) and as this master keeps it (a
// gzipped tar, which the trial launcher unpacks). Packed and read with libarchive.

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace det::master::experiments {

struct ModelFile {
  std::string path;     // relative, "/"-separated, no ".." segment
  std::string content;  // empty for a folder
  bool is_dir = false;
  uint32_t mode = 0644;
  int64_t mtime = 0;  // Unix seconds
  int64_t size = 0;   // read: the file's size (its content is left out unless asked for)
};

// The files as a gzipped tar, in order. InvalidArgument naming the first path that is absolute,
// has a ".." segment or is empty, and when the archive passes `max_bytes`.
Result<std::string> PackModelFiles(const std::vector<ModelFile>& files, int64_t max_bytes);

// The entries of a gzipped tar, in order (folders too); without their content unless
// `with_content`. InvalidArgument when it is not one.
Result<std::vector<ModelFile>> ReadModelFiles(const std::string& tar_gz, bool with_content);

}  // namespace det::master::experiments

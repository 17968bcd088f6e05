#include "common/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace det {

std::optional<std::string> ReadFileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

Status WriteFileInPlace(const std::string& path, const std::string& text) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return Internal("cannot write " + path + ": " + std::strerror(errno));
  struct stat info {};
  std::string padded = text;
  if (fstat(fd, &info) == 0 && static_cast<size_t>(info.st_size) > padded.size()) {
    padded.append(static_cast<size_t>(info.st_size) - padded.size(), ' ');
  }
  const ssize_t written = pwrite(fd, padded.data(), padded.size(), 0);
  const int error = errno;
  close(fd);
  if (written != static_cast<ssize_t>(padded.size())) {
    return Internal("cannot write " + path + ": " +
                    (written < 0 ? std::strerror(error) : "short write"));
  }
  return Status::Ok();
}

}  // namespace det

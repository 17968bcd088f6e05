#include "agent/workload_folders.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "agent/shim/workload_shim.h"

namespace det::agent {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSpareFolder = ".spare";

bool IsOwnFile(const std::string& name) {
  return name == kStdoutFile || name == kStderrFile || name == kExitStatusFile ||
         name == kStateFile;
}

// Truncates the agent's own file at `path` when it is a plain file with one link; else false.
bool TruncateOwnFile(const fs::path& path) {
  const int fd = open(path.c_str(), O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat info {};
  const bool plain = fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_nlink == 1;
  const bool emptied = plain && (info.st_size == 0 || ftruncate(fd, 0) == 0);
  close(fd);
  return emptied;
}

}  // namespace

WorkloadFolders::WorkloadFolders(std::string work_dir, size_t max_spares)
    : work_dir_(std::move(work_dir)),
      spare_dir_(work_dir_ + "/" + kSpareFolder),
      max_spares_(max_spares) {
  std::error_code ec;
  fs::create_directories(spare_dir_, ec);
  // Tasks of other accounts pass through to their own folders but list nothing here, nor in the
  // spares (each folder is 0700 for its task's account: workload_spawn.h).
  fs::permissions(work_dir_, fs::perms(0711), ec);
  fs::permissions(spare_dir_, fs::perms(0700), ec);
  for (const auto& entry : fs::directory_iterator(spare_dir_, ec)) {
    const std::string name = entry.path().filename().string();
    const bool numbered =
        !name.empty() && name.find_first_not_of("0123456789") == std::string::npos;
    if (!numbered || !entry.is_directory(ec) || entry.is_symlink(ec)) continue;
    spares_.push_back(name);
    next_spare_ = std::max<size_t>(next_spare_, std::stoull(name) + 1);
  }
}

std::string WorkloadFolders::PathOf(const std::string& allocation_id) const {
  return work_dir_ + "/" + allocation_id;
}

bool WorkloadFolders::IsWorkloadFolderName(const std::string& name) {
  return !name.empty() && name[0] != '.' && name.size() <= 255 &&
         name.find('/') == std::string::npos && name.find('\0') == std::string::npos;
}

void WorkloadFolders::StockUp() {
  while (spares_.size() < max_spares_) {
    const std::string name = std::to_string(next_spare_++);
    const std::string dir = spare_dir_ + "/" + name;
    if (mkdir(dir.c_str(), 0755) != 0) {
      spdlog::warn("cannot make spare folder {}: {}", dir, std::strerror(errno));
      return;
    }
    for (const char* file : {kStdoutFile, kStderrFile, kExitStatusFile, kStateFile}) {
      const int fd = open((dir + "/" + file).c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
      if (fd >= 0) close(fd);
    }
    spares_.push_back(name);
  }
}

Result<std::string> WorkloadFolders::Prepare(const std::string& allocation_id) {
  const std::string dir = PathOf(allocation_id);
  if (!spares_.empty()) {
    const std::string spare = spare_dir_ + "/" + spares_.back();
    if (std::rename(spare.c_str(), dir.c_str()) == 0) {
      spares_.pop_back();
      return dir;
    }
    spdlog::warn("cannot reuse {} as {}: {}", spare, dir, std::strerror(errno));
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Internal("cannot create " + dir + ": " + ec.message());
  return dir;
}

bool WorkloadFolders::Empty(const std::string& dir) const {
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(dir, ec))) return false;
  std::vector<fs::path> entries;
  for (const auto& entry : fs::directory_iterator(dir, ec)) entries.push_back(entry.path());
  if (ec) return false;
  for (const fs::path& path : entries) {
    if (IsOwnFile(path.filename().string())) {
      if (!TruncateOwnFile(path)) return false;
    } else if (fs::remove_all(path, ec); ec) {
      return false;
    }
  }
  return true;
}

void WorkloadFolders::Retire(const std::string& allocation_id) {
  const std::string dir = PathOf(allocation_id);
  if (spares_.size() < max_spares_ && Empty(dir)) {
    const std::string name = std::to_string(next_spare_++);
    if (std::rename(dir.c_str(), (spare_dir_ + "/" + name).c_str()) == 0) {
      spares_.push_back(name);
      return;
    }
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (ec) spdlog::warn("cannot remove {}: {}", dir, ec.message());
}

}  // namespace det::agent

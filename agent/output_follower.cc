#include "agent/output_follower.h"

#include <fcntl.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace det::agent {
namespace {

constexpr size_t kMaxLineBytes = 64 * 1024;  // longer lines are split

}  // namespace

OutputFollower::OutputFollower(const Clock& clock, LogShipper& shipper)
    : clock_(clock), shipper_(shipper), inotify_(inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {}

OutputFollower::~OutputFollower() {
  if (inotify_ >= 0) close(inotify_);
}

Status OutputFollower::Follow(const std::string& allocation_id, const std::string& dir,
                              Stream& stream, int64_t offset) {
  const std::string path = dir + "/" + stream.stdtype + ".log";
  stream.fd = open(path.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
  if (stream.fd < 0) return Internal("cannot read " + path + ": " + std::strerror(errno));
  lseek(stream.fd, offset, SEEK_SET);
  stream.offset = offset;
  stream.watch = inotify_add_watch(inotify_, path.c_str(), IN_MODIFY);
  if (stream.watch >= 0) watches_[stream.watch] = {allocation_id, stream.stdtype == "stderr"};
  return Status::Ok();
}

void OutputFollower::Close(Stream& stream) {
  if (stream.watch >= 0) {
    inotify_rm_watch(inotify_, stream.watch);
    watches_.erase(stream.watch);
  }
  stream.watch = -1;
  if (stream.fd >= 0) close(stream.fd);
  stream.fd = -1;
}

bool OutputFollower::Drain(const Owner& owner, Stream& stream, bool final) {
  auto emit = [&](int64_t offset, std::string text) {
    shipper_.Add(owner.allocation_id, owner.task_id,
                 {UnixNanos(clock_.WallNow()), stream.stdtype, std::move(text), offset},
                 clock_.Now());
  };
  char buf[65536];
  stream.behind = false;
  while (stream.fd >= 0) {
    if (shipper_.Full(owner.allocation_id)) {
      stream.behind = true;
      return false;
    }
    const ssize_t n = read(stream.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    const int64_t base = stream.offset - static_cast<int64_t>(stream.partial.size());
    stream.partial.append(buf, static_cast<size_t>(n));
    stream.offset += n;
    size_t start = 0;
    for (size_t nl; (nl = stream.partial.find('\n', start)) != std::string::npos; start = nl + 1) {
      emit(base + static_cast<int64_t>(start), stream.partial.substr(start, nl - start));
    }
    while (stream.partial.size() - start >= kMaxLineBytes) {
      emit(base + static_cast<int64_t>(start), stream.partial.substr(start, kMaxLineBytes));
      start += kMaxLineBytes;
    }
    stream.partial.erase(0, start);
  }
  if (final && !stream.partial.empty()) {
    emit(stream.offset - static_cast<int64_t>(stream.partial.size()), std::move(stream.partial));
    stream.partial.clear();
  }
  return true;
}

void OutputFollower::ReadEvents(const std::function<void(const std::string&, bool)>& changed) {
  alignas(inotify_event) char buf[8192];
  ssize_t n;
  while ((n = read(inotify_, buf, sizeof buf)) > 0) {
    for (char* p = buf; p < buf + n;) {
      auto* event = reinterpret_cast<inotify_event*>(p);
      if (auto it = watches_.find(event->wd); it != watches_.end()) {
        changed(it->second.first, it->second.second);
      }
      p += sizeof(inotify_event) + event->len;
    }
  }
}

}  // namespace det::agent

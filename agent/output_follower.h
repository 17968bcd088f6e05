#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include "agent/log_shipper.h"
#include "common/clock.h"
#include "common/status.h"

namespace det::agent {

// Follows workloads' output files (stdout.log, stderr.log in their folders) with inotify, line by
// line, stamping each line with the time read and its offset, into the LogShipper. Reading stops
// at the shipper's window (LogShipper::Full) and goes on when asked (the files hold the rest), so
// memory stays bounded whatever a workload writes. Lines longer than 64 KiB are split.
//
// Threading: not thread-safe; owned by the WorkloadRunner.
class OutputFollower {
 public:
  // One output file of one workload.
  struct Stream {
    std::string stdtype;  // "stdout" | "stderr"
    int fd = -1;
    int watch = -1;
    int64_t offset = 0;  // bytes read; `partial` starts at offset - partial.size()
    std::string partial;
    bool behind = false;  // reading stopped at the shipper's window, not at the end of the file
  };
  // Whose output a stream is: the allocation and task its lines are shipped for.
  struct Owner {
    std::string allocation_id;
    std::string task_id;
  };

  OutputFollower(const Clock& clock, LogShipper& shipper);
  ~OutputFollower();
  OutputFollower(const OutputFollower&) = delete;
  OutputFollower& operator=(const OutputFollower&) = delete;

  // The descriptor to poll for new output.
  int fd() const { return inotify_; }

  // Opens `dir`/<stdtype>.log (made if missing) at `offset` and watches it.
  Status Follow(const std::string& allocation_id, const std::string& dir, Stream& stream,
                int64_t offset);
  // Stops watching and closes the file.
  void Close(Stream& stream);
  // Reads the stream's new output into the shipper, up to its window; `final` also sends an
  // unterminated last line. True when it read to the end of the file.
  bool Drain(const Owner& owner, Stream& stream, bool final);
  // After fd() polled readable: calls `changed(allocation_id, is_stderr)` for each stream written
  // to since.
  void ReadEvents(const std::function<void(const std::string&, bool)>& changed);

 private:
  const Clock& clock_;
  LogShipper& shipper_;
  int inotify_ = -1;
  std::map<int, std::pair<std::string, bool>> watches_;  // watch -> (allocation, is stderr)
};

}  // namespace det::agent

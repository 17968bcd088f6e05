#pragma once

// What `det task|trial|experiment logs` share: which lines to print (--head, --tail, a time range)
// and printing a sequence of tasks' logs as one.

#include <CLI/CLI.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bus/catalog/tasks.h"
#include "cli/rpc_call.h"
#include "common/status.h"

namespace det::cli {

// The command line's choice of lines.
struct LogSelection {
  int64_t head = 0;   // only the first N lines of the whole (0: no limit)
  int64_t tail = 0;   // only the last N lines of the whole (0: no limit)
  std::string since;  // RFC 3339 time or a duration ago ("15m"); empty: open
  std::string until;  // likewise
  bool follow = false;
};

// Adds -f/--follow, --head, --tail, --since (--timestamp-after) and --until (--timestamp-before).
void AddLogSelectionOptions(CLI::App* command, const std::shared_ptr<LogSelection>& selection,
                            const std::string& follow_help);

// One task of a printed sequence; each of its lines is printed after `prefix`.
struct LogSource {
  std::string task_id;
  std::string prefix;
};

// Prints a sequence of tasks' logs as one log, in order, and follows some of them.
//
// Print() prints the selected lines of the sources given (head and tail count over all of them);
// Follow() prints what came since for the sources given, from where Print() or the last Follow()
// left each. Both return whether every source has ended with all its lines shown.
class LogPrinter {
 public:
  // `skip_unknown`: a task the master does not know (yet) prints nothing; else it is an error.
  LogPrinter(const CliOptions& options, LogSelection selection, bool skip_unknown);
  Result<bool> Print(const std::vector<LogSource>& sources);
  Result<bool> Follow(const std::vector<LogSource>& sources);
  // --head printed its lines: nothing more is printed.
  bool head_done() const { return selection_.head > 0 && printed_ >= selection_.head; }

 private:
  // The cursor before the selected lines of each source (the tail's starts).
  ::det::Status StartCursors(const std::vector<LogSource>& sources);
  // Prints the source's lines after its cursor, page by page; whether it has ended.
  Result<bool> PrintNew(const LogSource& source);
  // Prints one line (counted for --head).
  void PrintLine(const LogSource& source, const bus::TaskLogLine& line);
  // Prints the lines of a stored chunk that the selection takes after `after`, which it moves to
  // the last line printed, or to the chunk's end when it printed all it takes.
  ::det::Status PrintChunk(const LogSource& source, const bus::TaskLogChunk& chunk, int64_t& after);

  const CliOptions& options_;
  LogSelection selection_;
  int64_t since_ns_ = 0, until_ns_ = 0;
  ::det::Status times_;
  bool skip_unknown_;
  std::map<std::string, int64_t> after_;  // by task
  int64_t printed_ = 0;
};

}  // namespace det::cli

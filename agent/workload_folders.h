#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "agent/shim/workload_shim.h"
#include "common/status.h"

namespace det::agent {

// The agent's own record in a workload's folder (beside the shim's files, shim/workload_shim.h).
inline constexpr const char* kStateFile = "workload.json";

// The working folders of workloads under the agent's work_dir: `<work_dir>/<allocation id>`.
//
// A finished workload's folder is recycled rather than deleted: what the workload made in it is
// removed, the agent's own files (stdout.log, stderr.log, exit_status, workload.json) are
// truncated, and the folder waits under `<work_dir>/.spare/` for the next workload, which gets it
// by a rename. Creating and deleting several inodes per workload is what made dispatch slow on
// file systems that search past recently deleted inodes when allocating (ext4 without a journal
// does, for a minute or more); a recycled folder allocates and frees none. A folder whose own
// files are not plain, singly linked files (a workload may have replaced them with links) is
// deleted instead, so nothing outside it is ever truncated.
//
// The agent's files are rewritten in place (WriteFileInPlace, common/files.h), never replaced,
// for the same reason.
//
// Threading: not thread-safe; owned by the WorkloadRunner.
class WorkloadFolders {
 public:
  // Keeps at most `max_spares` folders waiting. Picks up the spares a previous agent left.
  WorkloadFolders(std::string work_dir, size_t max_spares);

  // Makes spare folders (with the agent's files in them) until `max_spares` wait: done when the
  // agent starts, so that its first workloads, too, start by a rename.
  void StockUp();
  // An empty folder for `allocation_id` (a recycled one when there is one); its path.
  Result<std::string> Prepare(const std::string& allocation_id);
  // The allocation's folder is no longer needed: recycled or deleted.
  void Retire(const std::string& allocation_id);

  std::string PathOf(const std::string& allocation_id) const;
  size_t spare_count() const { return spares_.size(); }

  // The names under work_dir that are workload folders (not `.spare`).
  static bool IsWorkloadFolderName(const std::string& name);

 private:
  // Empties a finished folder for reuse; false when it cannot be trusted (and must be deleted).
  bool Empty(const std::string& dir) const;

  std::string work_dir_;
  std::string spare_dir_;
  size_t max_spares_;
  std::vector<std::string> spares_;  // names under spare_dir_
  size_t next_spare_ = 0;
};

}  // namespace det::agent

#pragma once

// Gateway methods for the job queue, and the scheduler's demand event.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bus/codec.h"

namespace det::bus {

inline constexpr std::string_view kJobQueued = "QUEUED";
inline constexpr std::string_view kJobScheduled = "SCHEDULED";
inline constexpr std::string_view kJobBackfilled = "SCHEDULED_BACKFILLED";

// A job (a command; an experiment) in its pool's queue.
struct JobSummary {
  std::string job_id;
  std::string type;   // COMMAND, ...
  std::string state;  // QUEUED | SCHEDULED | SCHEDULED_BACKFILLED (placed past one ahead of it)
  std::string resource_pool;
  int32_t jobs_ahead = 0;  // jobs before it in the pool's queue order
  int32_t requested_slots = 0;
  int32_t allocated_slots = 0;
  int32_t priority = 0;
  double weight = 1.0;
  bool preemptible = false;
  int64_t submitted_at = 0;  // Unix nanoseconds
  std::string name;          // what it runs
  std::string owner;         // who submitted it
  bool operator==(const JobSummary&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("job_id", s.job_id, kRequired);
    v("type", s.type);
    v("state", s.state);
    v("resource_pool", s.resource_pool);
    v("jobs_ahead", s.jobs_ahead);
    v("requested_slots", s.requested_slots);
    v("allocated_slots", s.allocated_slots);
    v("priority", s.priority);
    v("weight", s.weight);
    v("preemptible", s.preemptible);
    v("submitted_at", s.submitted_at);
    v("name", s.name);
    v("owner", s.owner);
  }
};

// Method "job.list": unfinished jobs in queue order, per pool (all pools when empty).
struct JobListRequest {
  static constexpr std::string_view kType = "job.list";
  std::string resource_pool;
  bool operator==(const JobListRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("resource_pool", s.resource_pool);
  }
};

struct JobList {
  static constexpr std::string_view kType = "job.list.reply";
  std::vector<JobSummary> jobs;
  bool operator==(const JobList&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("jobs", s.jobs);
  }
};

// Method "job.update": changes what is given; the pool only of a job with nothing running.
struct JobUpdateRequest {
  static constexpr std::string_view kType = "job.update";
  std::string job_id;
  std::optional<int32_t> priority;
  std::optional<double> weight;
  std::optional<std::string> resource_pool;
  bool operator==(const JobUpdateRequest&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("job_id", s.job_id, kRequired);
    v("priority", s.priority);
    v("weight", s.weight);
    v("resource_pool", s.resource_pool);
  }
};

struct JobUpdateReply {
  static constexpr std::string_view kType = "job.update.reply";
  JobSummary job;
  bool operator==(const JobUpdateReply&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("job", s.job, kRequired);
  }
};

// Event bus, key "pending/<pool>": what waits in a pool after a scheduling pass, as the
// autoscaler counts it (Determined's rule): slots of pending tasks an instance could run (at most
// an instance's slots, or a multiple of them), summed per job and capped at its max_slots; and
// the zero-slot tasks waiting.
struct ClusterPending {
  static constexpr std::string_view kType = "cluster.pending";
  std::string resource_pool;
  int32_t pending_slots = 0;
  int32_t pending_aux_tasks = 0;
  int32_t pending_tasks = 0;    // every pending task that needs slots
  int32_t largest_request = 0;  // slots of the largest of them
  bool operator==(const ClusterPending&) const = default;
  template <class Self, class V>
  static void Fields(Self& s, V& v) {
    v("resource_pool", s.resource_pool, kRequired);
    v("pending_slots", s.pending_slots);
    v("pending_aux_tasks", s.pending_aux_tasks);
    v("pending_tasks", s.pending_tasks);
    v("largest_request", s.largest_request);
  }
};

}  // namespace det::bus

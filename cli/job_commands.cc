#include "cli/job_commands.h"

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "bus/catalog/cluster_json.h"
#include "bus/catalog/jobs.h"
#include "cli/output.h"
#include "cli/rpc_call.h"

namespace det::cli {
namespace {

using bus::ToJson;

void PrintJobs(const std::vector<bus::JobSummary>& jobs) {
  std::printf("%-32s %-12s %-20s %5s %8s %9s %8s %6s  %s\n", "JOB ID", "POOL", "STATE", "AHEAD",
              "PRIORITY", "REQUESTED", "ASSIGNED", "WEIGHT", "NAME");
  for (const auto& j : jobs) {
    std::printf("%-32s %-12s %-20s %5d %8d %9d %8d %6g  %s\n", j.job_id.c_str(),
                j.resource_pool.c_str(), j.state.c_str(), j.jobs_ahead, j.priority,
                j.requested_slots, j.allocated_slots, j.weight, j.name.c_str());
  }
}

int JobList(const CliOptions& options, const std::string& pool) {
  auto reply = Call<bus::JobListRequest, bus::JobList>(options, {pool});
  if (!reply.ok()) return Fail(reply.status());
  if (options.machine_readable()) {
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (const auto& j : reply->jobs) all.push_back(ToJson(j));
    PrintReply(options, all);
  } else {
    PrintJobs(reply->jobs);
  }
  return 0;
}

int JobUpdate(const CliOptions& options, const bus::JobUpdateRequest& request) {
  if (!request.priority && !request.weight && !request.resource_pool) {
    return Fail(InvalidArgument("nothing to change: give --priority, --weight or --resource-pool"));
  }
  auto reply = Call<bus::JobUpdateRequest, bus::JobUpdateReply>(options, request);
  if (!reply.ok()) return Fail(reply.status());
  if (options.machine_readable()) {
    PrintReply(options, ToJson(reply->job));
  } else {
    PrintJobs({reply->job});
  }
  return 0;
}

}  // namespace

void AddJobCommands(CLI::App& app, const CliOptions& options, int& rc) {
  auto* job = app.add_subcommand("job", "the job queue")->require_subcommand(1);
  auto list_pool = std::make_shared<std::string>();
  auto* list = job->add_subcommand("list", "unfinished jobs in queue order, per pool");
  list->add_option("--resource-pool", *list_pool, "only this pool");
  list->callback([&options, &rc, list_pool] { rc = JobList(options, *list_pool); });

  auto update = std::make_shared<bus::JobUpdateRequest>();
  auto* sub = job->add_subcommand("update", "change a job's priority, weight or pool");
  sub->add_option("job_id", update->job_id, "the job")->required();
  sub->add_option("--priority", update->priority, "1 (most urgent) to 99")
      ->check(CLI::Range(1, 99));
  sub->add_option("--weight", update->weight, "fair-share weight (more than 0)");
  sub->add_option("--resource-pool", update->resource_pool,
                  "move the job (only while nothing of it runs)");
  sub->callback([&options, &rc, update] { rc = JobUpdate(options, *update); });
}

}  // namespace det::cli

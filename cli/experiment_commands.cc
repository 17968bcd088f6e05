#include "cli/experiment_commands.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "bus/catalog/experiments.h"
#include "bus/catalog/experiments_json.h"
#include "cli/model_archive.h"
#include "cli/output.h"
#include "cli/rpc_call.h"
#include "cli/task_commands.h"

namespace det::cli {
namespace {

using nlohmann::ordered_json;

using bus::ToJson;

struct ContinueOptions {
  std::string config_file;
  std::vector<std::string> settings;
  bool follow = false;
};

// Bytes as people read them: 512 B, 1.5 KiB, 20.0 MiB, 3.2 GiB.
std::string ReadableBytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(units)) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
  return text;
}

void PrintExperiments(const std::vector<bus::ExperimentSummary>& experiments) {
  std::printf("%-6s %-12s %-20s %-14s %-20s %6s %9s %7s %17s  %s\n", "ID", "OWNER", "STATE",
              "SEARCHER", "NAME", "TRIALS", "COMPLETED", "ERRORED", "CHECKPOINTS", "MESSAGE");
  for (const auto& e : experiments) {
    const std::string checkpoints =
        std::to_string(e.checkpoint_count) + " (" + ReadableBytes(e.checkpoint_bytes) + ")";
    std::printf("%-6lld %-12s %-20s %-14s %-20s %6d %9d %7d %17s  %s\n",
                static_cast<long long>(e.id), e.owner.c_str(), e.state.c_str(), e.searcher.c_str(),
                e.name.c_str(), e.trials, e.trials_completed, e.trials_errored, checkpoints.c_str(),
                e.message.c_str());
  }
}

// What the experiment's checkpoint_storage keeps (Determined's defaults where it says nothing),
// and what is kept now.
void PrintCheckpointPolicy(const bus::ExperimentSummary& e) {
  const auto config = nlohmann::json::parse(e.config_json, nullptr, false);
  const nlohmann::json storage = config.is_object() && config.contains("checkpoint_storage") &&
                                         config["checkpoint_storage"].is_object()
                                     ? config["checkpoint_storage"]
                                     : nlohmann::json::object();
  auto kept = [&](const char* field, int fallback) {
    const auto it = storage.find(field);
    return it != storage.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
  };
  std::printf(
      "checkpoints: %d kept, %s; checkpoint_storage keeps the experiment's best %lld, each "
      "trial's best %lld and latest %lld, and any a model version registers\n",
      e.checkpoint_count, ReadableBytes(e.checkpoint_bytes).c_str(),
      static_cast<long long>(kept("save_experiment_best", 0)),
      static_cast<long long>(kept("save_trial_best", 1)),
      static_cast<long long>(kept("save_trial_latest", 1)));
}

void PrintTrials(const std::vector<bus::TrialSummary>& trials) {
  std::printf("%-6s %-10s %-11s %4s %8s %6s  %-30s %s\n", "TRIAL", "STATE", "TASK", "RUN",
              "RESTARTS", "STEPS", "BEST VALIDATION", "HPARAMS");
  for (const auto& t : trials) {
    std::printf("%-6lld %-10s %-11s %4d %8d %6lld  %-30s %s\n", static_cast<long long>(t.id),
                t.state.c_str(), t.task_state.c_str(), t.run_id, t.restarts,
                static_cast<long long>(t.steps_completed), t.best_validation_json.c_str(),
                t.hparams_json.c_str());
  }
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return InvalidArgument("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Submits the experiment; its id goes to `*id`. With `dry_run` the master only checks the config
// (with the cluster's defaults merged in): 0 when it would be accepted, 2 when not.
int Create(const CliOptions& options, const std::string& config_path, const std::string& model_dir,
           bool dry_run, int64_t* id) {
  auto config = ReadFile(config_path);
  if (!config.ok()) return Fail(config.status());
  bus::ExperimentCreateRequest request{*config, {}};
  request.dry_run = dry_run;
  if (!model_dir.empty()) {
    auto packed =
        PackModelDefinition(model_dir, bus::ExperimentCreateRequest::kMaxModelDefinitionBytes);
    if (!packed.ok()) return Fail(packed.status());
    request.model_definition.data = std::move(*packed);
  }
  // Not idempotent: one attempt, with time for a large model definition.
  auto reply = Call<bus::ExperimentCreateRequest, bus::ExperimentCreateReply>(
      options, request, {.timeout = std::chrono::seconds(60), .attempts = 1});
  if (!reply.ok()) {
    const int failed = Fail(reply.status());
    return dry_run && reply.status().code() == StatusCode::kInvalidArgument ? 2 : failed;
  }
  *id = reply->id;
  if (options.machine_readable()) {
    PrintReply(options, ordered_json{{"id", reply->id}, {"warnings", reply->warnings}});
    return 0;
  }
  for (const std::string& warning : reply->warnings) std::cerr << "warning: " << warning << "\n";
  if (dry_run) {
    std::cout << config_path << ": valid; nothing was created\n";
  } else {
    std::cout << "Created experiment " << reply->id << "\n";
  }
  return 0;
}

int List(const CliOptions& options, const bus::ExperimentListRequest& request) {
  auto reply = Call<bus::ExperimentListRequest, bus::ExperimentList>(options, request);
  if (!reply.ok()) return Fail(reply.status());
  if (options.machine_readable()) {
    ordered_json all = ordered_json::array();
    for (const auto& e : reply->experiments) all.push_back(ToJson(e));
    PrintReply(options, all);
  } else {
    PrintExperiments(reply->experiments);
    if (static_cast<int32_t>(reply->experiments.size()) < reply->total) {
      std::cout << "(" << reply->experiments.size() << " of " << reply->total
                << " matching; --offset and --limit page through them)\n";
    }
  }
  return 0;
}

int Describe(const CliOptions& options, int64_t id) {
  auto reply = Call<bus::ExperimentGetRequest, bus::ExperimentGetReply>(options, {id});
  if (!reply.ok()) return Fail(reply.status());
  if (options.machine_readable()) {
    PrintReply(options, ToJson(*reply));
  } else {
    PrintExperiments({reply->experiment});
    PrintCheckpointPolicy(reply->experiment);
    std::cout << "\n";
    PrintTrials(reply->trials);
  }
  return 0;
}

int Act(const CliOptions& options, int64_t id, const std::string& action) {
  auto reply =
      Call<bus::ExperimentActionRequest, bus::ExperimentActionReply>(options, {id, action});
  if (!reply.ok()) return Fail(reply.status());
  std::cout << "experiment " << id << " is " << reply->state << "\n";
  return 0;
}

// Deleting removes checkpoints and records for good: asks first unless `yes`, and refuses to
// guess when nobody is at a terminal to answer.
int Delete(const CliOptions& options, int64_t id, bool yes) {
  if (!yes) {
    if (!isatty(STDIN_FILENO)) {
      return Fail(FailedPrecondition(
          "deleting experiment " + std::to_string(id) +
          " removes its checkpoints, metrics and logs for good: pass --yes to confirm"));
    }
    std::cout << "Delete experiment " << id
              << " with its checkpoints, metrics and logs? This cannot be undone. [y/N] "
              << std::flush;
    std::string answer;
    std::getline(std::cin, answer);
    if (answer != "y" && answer != "Y" && answer != "yes") {
      std::cout << "not deleted\n";
      return 1;
    }
  }
  return Act(options, id, "delete");
}

// Whether an experiment in `state` has ended for good.
bool Ended(const std::string& state) {
  return state == "COMPLETED" || state == "CANCELED" || state == "ERROR";
}

// Waits until the experiment has ended; 0 when it COMPLETED.
int Wait(const CliOptions& options, int64_t id) {
  while (true) {
    auto reply = Call<bus::ExperimentGetRequest, bus::ExperimentGetReply>(options, {id});
    if (!reply.ok()) return Fail(reply.status());
    const std::string& state = reply->experiment.state;
    if (Ended(state)) {
      std::cout << "experiment " << id << " ended " << state << "\n";
      return state == "COMPLETED" ? 0 : 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

// `kill`: stops the trial first (it ends CANCELED; the search goes on with the others).
int TrialDescribe(const CliOptions& options, int64_t id, bool kill = false) {
  auto reply = kill ? Call<bus::TrialKillRequest, bus::TrialGetReply>(options, {id})
                    : Call<bus::TrialGetRequest, bus::TrialGetReply>(options, {id});
  if (!reply.ok()) return Fail(reply.status());
  if (options.machine_readable()) {
    PrintReply(options, ToJson(reply->trial));
  } else {
    PrintTrials({reply->trial});
  }
  return 0;
}

// The run tasks of a trial, oldest first, each line prefixed with `prefix`.
std::vector<LogSource> RunSources(int64_t trial_id, int runs, const std::string& prefix) {
  std::vector<LogSource> sources;
  for (int run = 1; run <= runs; ++run) {
    sources.push_back({"trial-" + std::to_string(trial_id) + "-" + std::to_string(run), prefix});
  }
  return sources;
}

// Every run's output as one log, oldest run first; following the current one with `follow`.
int TrialLogs(const CliOptions& options, int64_t id, const LogSelection& selection) {
  auto reply = Call<bus::TrialGetRequest, bus::TrialGetReply>(options, {id});
  if (!reply.ok()) return Fail(reply.status());
  LogPrinter printer(options, selection, /*skip_unknown=*/true);
  const std::vector<LogSource> runs = RunSources(id, reply->trial.run_id, "");
  auto ended = printer.Print(runs);
  const std::vector<LogSource> current(runs.end() - std::min<size_t>(runs.size(), 1), runs.end());
  while (ended.ok() && selection.follow && !*ended && !printer.head_done()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    ended = printer.Follow(current);
  }
  return ended.ok() ? 0 : Fail(ended.status());
}

// Every trial's output as one log, oldest trial and run first. With `follow`, keeps printing new
// lines of every run until the experiment ended; then 0 when it COMPLETED.
int ExperimentLogs(const CliOptions& options, int64_t id, const LogSelection& selection) {
  LogPrinter printer(options, selection, /*skip_unknown=*/true);
  bool first = true;
  while (true) {
    auto reply = Call<bus::ExperimentGetRequest, bus::ExperimentGetReply>(options, {id});
    if (!reply.ok()) return Fail(reply.status());
    const bool ended = Ended(reply->experiment.state);  // read before the lines: none is missed
    std::vector<LogSource> sources;
    for (const auto& trial : reply->trials) {
      for (LogSource& run :
           RunSources(trial.id, trial.run_id, "[trial " + std::to_string(trial.id) + "] ")) {
        sources.push_back(std::move(run));
      }
    }
    auto printed = first ? printer.Print(sources) : printer.Follow(sources);
    first = false;
    if (!printed.ok()) return Fail(printed.status());
    if (!selection.follow || printer.head_done()) return 0;
    if (ended) {
      std::cerr << "experiment " << id << " ended " << reply->experiment.state << "\n";
      return reply->experiment.state == "COMPLETED" ? 0 : 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

// Trains a finished single-searcher experiment's trial again under its config with `config_path`
// (a YAML file of fields, "" for none) and `settings` ("key.path=value") merged over it; with
// `follow`, prints its output until it ends.
int Continue(const CliOptions& options, int64_t id, const std::string& config_path,
             const std::vector<std::string>& settings, bool follow) {
  bus::ExperimentContinueRequest request{id, "", settings};
  if (!config_path.empty()) {
    Result<std::string> text = ReadFile(config_path);
    if (!text.ok()) return Fail(text.status());
    request.override_config_yaml = *text;
  }
  auto reply = Call<bus::ExperimentContinueRequest, bus::ExperimentContinueReply>(options, request);
  if (!reply.ok()) return Fail(reply.status());
  for (const std::string& warning : reply->warnings) std::cerr << "warning: " << warning << "\n";
  std::cout << "Continued experiment " << id << "\n";
  return follow ? ExperimentLogs(options, id, LogSelection{.follow = true}) : 0;
}

int ListTrials(const CliOptions& options, int64_t id) {
  auto reply = Call<bus::ExperimentGetRequest, bus::ExperimentGetReply>(options, {id});
  if (!reply.ok()) return Fail(reply.status());
  if (options.machine_readable()) {
    ordered_json all = ordered_json::array();
    for (const auto& trial : reply->trials) all.push_back(ToJson(trial));
    PrintReply(options, all);
  } else {
    PrintTrials(reply->trials);
  }
  return 0;
}

int ListCheckpoints(const CliOptions& options, int64_t id) {
  auto reply = Call<bus::ExperimentCheckpointsRequest, bus::CheckpointList>(options, {id});
  if (!reply.ok()) return Fail(reply.status());
  if (options.machine_readable()) {
    ordered_json all = ordered_json::array();
    for (const auto& c : reply->checkpoints) all.push_back(ToJson(c));
    PrintReply(options, all);
    return 0;
  }
  std::printf("%-6s %-36s %8s %-10s %12s\n", "TRIAL", "UUID", "STEPS", "STATE", "BYTES");
  for (const auto& c : reply->checkpoints) {
    std::printf("%-6lld %-36s %8lld %-10s %12lld\n", static_cast<long long>(c.trial_id),
                c.uuid.c_str(), static_cast<long long>(c.steps_completed), c.state.c_str(),
                static_cast<long long>(c.size_bytes));
  }
  return 0;
}

}  // namespace

void AddExperimentCommands(CLI::App& app, const CliOptions& options, int& rc) {
  auto* experiment =
      app.add_subcommand("experiment", "experiments and their trials")->require_subcommand(1);
  experiment->alias("e");
  auto config = std::make_shared<std::string>();
  auto model_dir = std::make_shared<std::string>();
  auto* create = experiment->add_subcommand("create", "submit an experiment");
  create->add_option("config", *config, "the experiment YAML")->required();
  create->add_option("model_dir", *model_dir, "the model definition folder (uploaded)");
  auto follow_created = std::make_shared<bool>(false);
  create->add_flag("-f,--follow", *follow_created,
                   "then print the trials' output until the experiment ends (exit 0: COMPLETED)");
  auto dry_run = std::make_shared<bool>(false);
  create->add_flag("--dry-run", *dry_run,
                   "only check the config against the master (exit 0 if valid, 2 if not)");
  create->callback([&options, &rc, config, model_dir, follow_created, dry_run] {
    int64_t created = 0;
    rc = Create(options, *config, *model_dir, *dry_run, &created);
    if (rc == 0 && *follow_created && !*dry_run)
      rc = ExperimentLogs(options, created, LogSelection{.follow = true});
  });

  auto filters = std::make_shared<bus::ExperimentListRequest>();
  auto* list = experiment->add_subcommand("list", "experiments, newest first");
  list->add_option("--state", filters->states, "only in this state (repeat for several)");
  list->add_option("--name", filters->name, "only those whose name contains this");
  list->add_option("--label", filters->label, "only those with this label");
  list->add_option("--offset", filters->offset, "skip this many matches")
      ->check(CLI::NonNegativeNumber);
  list->add_option("--limit", filters->limit, "at most this many (0: all)")
      ->check(CLI::Range(0, 10000));
  list->callback([&options, &rc, filters] { rc = List(options, *filters); });

  auto id = std::make_shared<int64_t>(0);
  auto* describe = experiment->add_subcommand("describe", "an experiment and its trials");
  describe->add_option("id", *id, "experiment id")->required();
  describe->callback([&options, &rc, id] { rc = Describe(options, *id); });

  for (const char* action : {"pause", "activate", "cancel", "kill"}) {
    auto* sub = experiment->add_subcommand(action, std::string(action) + " an experiment");
    sub->add_option("id", *id, "experiment id")->required();
    sub->callback([&options, &rc, id, action] { rc = Act(options, *id, action); });
  }
  auto continued = std::make_shared<ContinueOptions>();
  auto* continue_command = experiment->add_subcommand(
      "continue", "train a finished single-searcher experiment's trial again, e.g. for longer");
  continue_command->add_option("id", *id, "experiment id")->required();
  continue_command->add_option("--config-file", continued->config_file,
                               "a YAML file of config fields to change");
  continue_command->add_option("--config", continued->settings,
                               "a config field to change: key.path=value (repeat for several)");
  continue_command->add_flag("-f,--follow-first-trial", continued->follow,
                             "then print the trial's output until the experiment ends");
  continue_command->callback([&options, &rc, id, continued] {
    rc = Continue(options, *id, continued->config_file, continued->settings, continued->follow);
  });
  auto yes = std::make_shared<bool>(false);
  auto* remove = experiment->add_subcommand(
      "delete", "delete a finished experiment with its checkpoints, metrics and logs");
  remove->add_option("id", *id, "experiment id")->required();
  remove->add_flag("-y,--yes", *yes, "do not ask for confirmation");
  remove->callback([&options, &rc, id, yes] { rc = Delete(options, *id, *yes); });
  auto* wait = experiment->add_subcommand("wait", "wait for an experiment to end (0: COMPLETED)");
  wait->add_option("id", *id, "experiment id")->required();
  wait->callback([&options, &rc, id] { rc = Wait(options, *id); });

  auto selection = std::make_shared<LogSelection>();
  auto* experiment_logs = experiment->add_subcommand("logs", "every trial's output");
  experiment_logs->add_option("id", *id, "experiment id")->required();
  AddLogSelectionOptions(experiment_logs, selection, "keep printing until the experiment ends");
  experiment_logs->callback(
      [&options, &rc, id, selection] { rc = ExperimentLogs(options, *id, *selection); });
  auto* list_trials = experiment->add_subcommand("list-trials", "an experiment's trials");
  list_trials->add_option("id", *id, "experiment id")->required();
  list_trials->callback([&options, &rc, id] { rc = ListTrials(options, *id); });
  auto* list_checkpoints =
      experiment->add_subcommand("list-checkpoints", "an experiment's checkpoints");
  list_checkpoints->add_option("id", *id, "experiment id")->required();
  list_checkpoints->callback([&options, &rc, id] { rc = ListCheckpoints(options, *id); });

  auto* trial = app.add_subcommand("trial", "trials")->require_subcommand(1);
  trial->alias("t");
  auto* trial_describe = trial->add_subcommand("describe", "one trial");
  trial_describe->add_option("id", *id, "trial id")->required();
  trial_describe->callback([&options, &rc, id] { rc = TrialDescribe(options, *id); });
  auto* logs = trial->add_subcommand("logs", "a trial's output, every run");
  logs->add_option("id", *id, "trial id")->required();
  AddLogSelectionOptions(logs, selection, "keep printing until the trial's run ends");
  logs->callback([&options, &rc, id, selection] { rc = TrialLogs(options, *id, *selection); });
  auto* kill = trial->add_subcommand("kill", "stop one trial (it ends CANCELED)");
  kill->add_option("id", *id, "trial id")->required();
  kill->callback([&options, &rc, id] { rc = TrialDescribe(options, *id, /*kill=*/true); });
}

}  // namespace det::cli

#include "cli/cluster_commands.h"

#include <memory>

#include "cli/agent_commands.h"

namespace det::cli {
namespace {

struct AgentArgs {
  std::string agent_id;
  std::string slot_id;
  bool drain = false;
};

void AddSlotCommands(CLI::App& app, const CliOptions& options, int& rc,
                     const std::shared_ptr<AgentArgs>& args) {
  auto* slot = app.add_subcommand("slot", "slots of an agent")->require_subcommand(1);
  auto* slot_list = slot->add_subcommand("list", "every agent's slots, or one agent's");
  slot_list->add_option("agent_id", args->agent_id, "only this agent");
  slot_list->callback([&options, &rc, args] { rc = SlotList(options, args->agent_id); });
  for (bool enable : {true, false}) {
    auto* sub =
        slot->add_subcommand(enable ? "enable" : "disable",
                             enable ? "let a slot take new work" : "give a slot no new work");
    sub->add_option("agent_id", args->agent_id, "the agent")->required();
    sub->add_option("slot_id", args->slot_id, "the slot")->required();
    sub->callback([&options, &rc, args, enable] {
      rc = SlotEnable(options, args->agent_id, args->slot_id, enable);
    });
  }
}

}  // namespace

void AddMasterCommands(CLI::App& app, const CliOptions& options, int& rc) {
  auto* master = app.add_subcommand("master", "the master")->require_subcommand(1);
  master->add_subcommand("info", "version and identity of the master")->callback([&] {
    rc = MasterInfo(options);
  });
  auto follow = std::make_shared<bool>(false);
  auto* logs = master->add_subcommand("logs", "the master's recent log lines (admins)");
  logs->add_flag("-f,--follow", *follow, "keep printing new lines");
  logs->callback([&options, &rc, follow] { rc = MasterLogs(options, *follow); });
  master
      ->add_subcommand("forget-key",
                       "forget the gateway key first seen at this master's URL (after the master "
                       "was redeployed with new keys): the next call trusts the one it presents")
      ->callback([&] { rc = MasterForgetKey(options); });

  auto base = std::make_shared<std::string>();
  auto* keygen = app.add_subcommand("keygen", "create a CURVE key pair: NAME.key and NAME.pub");
  keygen->add_option("name", *base, "path prefix of the key files")->required();
  keygen->callback([&rc, base] { rc = KeyGen(*base); });
}

void AddAgentCommands(CLI::App& app, const CliOptions& options, int& rc) {
  auto args = std::make_shared<AgentArgs>();
  auto* agent = app.add_subcommand("agent", "agents")->require_subcommand(1);
  agent->add_subcommand("list", "agents and their slots")->callback([&] {
    rc = AgentList(options);
  });
  auto* enable = agent->add_subcommand("enable", "let an agent take new work");
  enable->add_option("agent_id", args->agent_id, "the agent")->required();
  enable->callback(
      [&options, &rc, args] { rc = AgentEnable(options, args->agent_id, true, false); });
  auto* disable =
      agent->add_subcommand("disable", "give an agent no new work; kill its tasks unless --drain");
  disable->add_option("agent_id", args->agent_id, "the agent")->required();
  disable->add_flag("--drain", args->drain, "let running tasks finish");
  disable->callback(
      [&options, &rc, args] { rc = AgentEnable(options, args->agent_id, false, args->drain); });
  AddSlotCommands(app, options, rc, args);
  auto* pool = app.add_subcommand("resource-pool", "resource pools")->require_subcommand(1);
  pool->add_subcommand("list", "pools, their schedulers and slots")->callback([&] {
    rc = ResourcePoolList(options);
  });
}

}  // namespace det::cli

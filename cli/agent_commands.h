#pragma once

#include <string>

#include "cli/cli_client.h"

namespace det::cli {

// det agent list
int AgentList(const CliOptions& options);
// det agent enable ID / det agent disable ID [--drain]
int AgentEnable(const CliOptions& options, const std::string& agent_id, bool enabled, bool drain);
// det slot enable AGENT SLOT / det slot disable AGENT SLOT
int SlotEnable(const CliOptions& options, const std::string& agent_id, const std::string& slot_id,
               bool enabled);

// det slot list [AGENT]
int SlotList(const CliOptions& options, const std::string& agent_id);
// det resource-pool list
int ResourcePoolList(const CliOptions& options);

}  // namespace det::cli

#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace det::master::scheduler {

// How large a pool with a provider can grow.
struct ProviderSize {
  int max_instances = 0;
  int32_t slots_per_instance = 0;
};

// Whether a request for `slots` could ever be placed in `pool_name`: OK, or InvalidArgument
// naming the slots asked for and what the pool has (or can grow to). A pool with a provider is
// judged by its limits (max_instances instances of slots_per_instance), one without by the agents
// it has (`agent_slots`, each agent's slots); a pool without either cannot be judged and any
// request is accepted. Gang fits count: a request that is not single-node may span agents of one
// size P when slots is a multiple of P. Zero-slot requests always fit.
Status CheckCanEverFit(int32_t slots, bool single_node, const std::string& pool_name,
                       const std::vector<int32_t>& agent_slots,
                       const std::optional<ProviderSize>& provider);

}  // namespace det::master::scheduler

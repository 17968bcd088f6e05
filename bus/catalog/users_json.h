#pragma once

#include <nlohmann/json.hpp>

#include "bus/catalog/users.h"

namespace det::bus {

// The JSON forms of users and access tokens that `det --json` prints and the REST API answers: a
// user is Determined's v1User (camelCase, agentUserGroup when linked) with its createdAt.
nlohmann::ordered_json ToJson(const UserSummary& user);
nlohmann::ordered_json ToJson(const TokenSummary& token);

}  // namespace det::bus

#pragma once

#include <nlohmann/json.hpp>

#include "bus/catalog/users.h"

namespace det::bus {

// The JSON forms of users and access tokens that `det --json` prints and the REST API answers.
nlohmann::ordered_json ToJson(const UserSummary& user);
nlohmann::ordered_json ToJson(const TokenSummary& token);

}  // namespace det::bus

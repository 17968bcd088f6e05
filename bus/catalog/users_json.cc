#include "bus/catalog/users_json.h"

namespace det::bus {

nlohmann::ordered_json ToJson(const UserSummary& user) {
  return {{"id", user.id},
          {"username", user.username},
          {"admin", user.admin},
          {"active", user.active},
          {"created_at", user.created_at}};
}

nlohmann::ordered_json ToJson(const TokenSummary& token) {
  return {{"id", token.id},
          {"username", token.username},
          {"description", token.description},
          {"created_at", token.created_at},
          {"expires_at", token.expires_at},
          {"revoked_at", token.revoked_at}};
}

}  // namespace det::bus

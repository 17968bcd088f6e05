#include "bus/catalog/users_json.h"

#include "common/clock.h"

namespace det::bus {

nlohmann::ordered_json ToJson(const UserSummary& user) {
  nlohmann::ordered_json json = {{"id", user.id},
                                 {"username", user.username},
                                 {"admin", user.admin},
                                 {"active", user.active},
                                 {"displayName", ""},
                                 {"remote", false},
                                 {"createdAt", Rfc3339Utc(user.created_at, 6)}};
  if (user.agent_user_group) {
    const AgentUserGroup& a = *user.agent_user_group;
    json["agentUserGroup"] = {
        {"agentUid", a.uid}, {"agentGid", a.gid}, {"agentUser", a.user}, {"agentGroup", a.group}};
  }
  return json;
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

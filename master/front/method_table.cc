#include "master/front/method_table.h"

#include <string>

namespace det::master {

Status Allow(const auth::Principal& caller, Access access, std::string_view method) {
  if (access != Access::kAdmin || caller.admin) return Status::Ok();
  return PermissionDenied(std::string(method) + " is for admins only (you are \"" +
                          caller.username + "\")");
}

}  // namespace det::master

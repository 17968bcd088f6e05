#pragma once

// det's own files in the user's config folder: $XDG_CONFIG_HOME/det, else ~/.config/det (the
// login sessions, the masters' keys first seen, det's own key pair). Each is a JSON document
// replaced at once and readable by its owner only.

#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"

namespace det::cli {

// `name` in det's config folder, or the file the variable `override_env` names when set.
std::string ConfigFile(const std::string& name, const char* override_env);

// The whole document; an unreadable or malformed file reads as an empty object.
nlohmann::json LoadJsonFile(const std::string& path);
// Replaces the file at once (write, then rename), mode 0600; `what` names it in errors.
Status SaveJsonFile(const std::string& path, const nlohmann::json& doc, const std::string& what);

}  // namespace det::cli

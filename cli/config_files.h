#pragma once

// det's own files in the user's config folder: $XDG_CONFIG_HOME/det, else ~/.config/det (the
// login sessions, the masters' keys first seen, det's own key pair). Each is a JSON document
// replaced at once and readable by its owner only; det processes running at once change one in
// turn (UpdateJsonFile), so none loses another's change.

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"

namespace det::cli {

// `name` in det's config folder, or the file the variable `override_env` names when set.
std::string ConfigFile(const std::string& name, const char* override_env);

// The whole document; an unreadable or malformed file reads as an empty object (a cache).
nlohmann::json LoadJsonFile(const std::string& path);
// The same for a file that must not be lost silently (the keys det trusts): empty when there is
// none, an error when it does not read.
Result<nlohmann::json> LoadJsonFileStrictly(const std::string& path);
// `folder` (and its parents), made mode 0700 where it is new.
Status MakePrivateFolder(const std::string& folder);
// Replaces the file at once (write, then rename), mode 0600; `what` names it in errors.
Status SaveJsonFile(const std::string& path, const nlohmann::json& doc, const std::string& what);

// Reads the document (as LoadJsonFileStrictly when `strict`, else as LoadJsonFile), lets `change`
// change it and saves it, holding an exclusive lock (flock on `path`.lock) from the read to the
// save: of det processes changing the file at once, each sees the others' changes. Nothing is
// saved when `change` fails; its error is returned.
Status UpdateJsonFile(const std::string& path, const std::string& what, bool strict,
                      const std::function<Status(nlohmann::json& doc)>& change);

}  // namespace det::cli

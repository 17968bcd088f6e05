#include "master/experiments/entrypoint_files.h"

#include <regex>
#include <set>
#include <sstream>

namespace det::master::experiments {
namespace {

// The entrypoint's words: a one-string entrypoint split on white space (a shell line: good enough
// to find the scripts it names), a list as it is.
std::vector<std::string> Words(const std::vector<std::string>& entrypoint) {
  if (entrypoint.size() != 1) return entrypoint;
  std::vector<std::string> words;
  std::istringstream line(entrypoint[0]);
  for (std::string word; line >> word;) words.push_back(word);
  return words;
}

std::string Normalized(std::string path) {
  while (path.starts_with("./")) path.erase(0, 2);
  return path;
}

}  // namespace

std::vector<std::string> EntrypointWarnings(const std::vector<std::string>& entrypoint,
                                            const std::vector<ModelFile>& files) {
  if (files.empty()) return {};
  std::set<std::string> paths;
  for (const ModelFile& file : files) {
    if (!file.is_dir) paths.insert(Normalized(file.path));
  }
  std::vector<std::string> warnings;
  static const std::regex kLegacy("^[A-Za-z0-9_.]+:[A-Za-z0-9_]+$");
  if (entrypoint.size() == 1 && std::regex_match(entrypoint[0], kLegacy)) {
    const std::string module = entrypoint[0].substr(0, entrypoint[0].find(':'));
    std::string base = module;
    for (char& c : base) c = c == '.' ? '/' : c;
    if (!paths.count(base + ".py") && !paths.count(base + "/__init__.py")) {
      warnings.push_back("entrypoint: " + entrypoint[0] + " names the module " + module +
                         ", which is not in the model definition (no " + base +
                         ".py): the trial would fail to start");
    }
    return warnings;
  }
  for (const std::string& word : Words(entrypoint)) {
    if (!word.ends_with(".py") || word.starts_with("-") || word.starts_with("/") ||
        word.find('=') != std::string::npos) {
      continue;
    }
    if (!paths.count(Normalized(word))) {
      warnings.push_back("entrypoint: " + word +
                         " is not in the model definition (the folder given to `det experiment "
                         "create`): the trial would fail to start");
    }
  }
  return warnings;
}

}  // namespace det::master::experiments

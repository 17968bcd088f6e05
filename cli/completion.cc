#include "cli/completion.h"

#include <iostream>
#include <map>

namespace det::cli {
namespace {

// Every command path (" agent list") with the words that may follow it.
void Collect(const CLI::App& app, const std::string& path,
             std::map<std::string, std::string>* words) {
  std::string& here = (*words)[path];
  for (const CLI::App* sub : app.get_subcommands({})) {
    here += sub->get_name() + " ";
    Collect(*sub, path + " " + sub->get_name(), words);
  }
  for (const CLI::Option* option : app.get_options()) {
    for (const std::string& name : option->get_lnames()) here += "--" + name + " ";
    for (const std::string& name : option->get_snames()) here += "-" + name + " ";
  }
}

}  // namespace

std::string BashCompletion(const CLI::App& app) {
  std::map<std::string, std::string> words;
  Collect(app, "", &words);
  std::string cases;
  for (const auto& [path, next] : words) {
    cases += "    \"" + path + "\") words=\"" + next + "\" ;;\n";
  }
  std::string known;
  for (const auto& [path, next] : words) {
    if (!path.empty()) known += "\"" + path + "\"|";
  }
  known.pop_back();
  return "# det completion for bash: source <(det completion bash)\n"
         "_det() {\n"
         "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" path=\"\" words=\"\" i\n"
         "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
         "    case \"$path ${COMP_WORDS[i]}\" in\n"
         "      " +
         known +
         ") path=\"$path ${COMP_WORDS[i]}\" ;;\n"
         "    esac\n"
         "  done\n"
         "  case \"$path\" in\n" +
         cases +
         "  esac\n"
         "  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
         "}\n"
         "complete -F _det det\n";
}

void AddCompletionCommand(CLI::App& app, int& rc) {
  auto* completion = app.add_subcommand("completion", "print a shell completion script");
  auto* bash = completion->add_subcommand("bash", "for bash (and zsh with bashcompinit)");
  completion->require_subcommand(1);
  bash->callback([&app, &rc] {
    std::cout << BashCompletion(app);
    rc = 0;
  });
}

}  // namespace det::cli

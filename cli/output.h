#pragma once

// How det prints replies for scripts: `--json` (one JSON value per line) or `--csv`.

#include <nlohmann/json.hpp>

#include "cli/cli_client.h"

namespace det::cli {

// Prints `value` as JSON, or with --csv as comma-separated values (RFC 4180): an array of
// objects is a header line of their keys (the first object's, then any new ones) and a row per
// object; one object is one row; nested values are written as JSON text. A stream of objects
// printed one by one (a log follow) gets its header once.
void PrintReply(const CliOptions& options, const nlohmann::ordered_json& value);

// The CSV form alone (what PrintReply prints with --csv), `header` false to leave the header out.
std::string ToCsv(const nlohmann::ordered_json& value, bool header = true);

}  // namespace det::cli

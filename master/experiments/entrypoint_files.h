#pragma once

// Whether an experiment's entrypoint finds its own files in the model definition it was sent
// with: what `det experiment create` (and its --dry-run) warns about before any trial fails to
// start on an agent.

#include <string>
#include <vector>

#include "master/experiments/model_files.h"

namespace det::master::experiments {

// One warning for each file the entrypoint names that `files` (the model definition's entries,
// paths relative to its root) lacks: a script `X.py` (also one a launcher is given, as in
// `python3 -m determined.launch.torch_distributed python3 train.py`), and the module of a legacy
// `module.sub:TrialClass` (module/sub.py or module/sub/__init__.py). A module run with `-m` is
// not checked: it may be installed in the image. None when `files` is empty (no model definition:
// the entrypoint runs what the image has).
std::vector<std::string> EntrypointWarnings(const std::vector<std::string>& entrypoint,
                                            const std::vector<ModelFile>& files);

}  // namespace det::master::experiments

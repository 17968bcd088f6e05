#!/usr/bin/env bash
# Configures and builds the project into build/ (RelWithDebInfo, Ninja) and the WebUI into
# build/webui/dist (scripts/build-webui.sh). Extra arguments go to ninja (e.g. a target name) and
# then only those are built.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
ninja -C build "$@"
# The WebUI too, unless only some targets were asked for.
if [ $# -eq 0 ]; then "$(dirname "$0")/build-webui.sh"; fi

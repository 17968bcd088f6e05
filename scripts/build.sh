#!/usr/bin/env bash
# Configures and builds the project into build/ (RelWithDebInfo, Ninja). Extra arguments go to
# ninja (e.g. a target name).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f build/build.ninja ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
ninja -C build "$@"

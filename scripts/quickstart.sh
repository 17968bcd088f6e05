#!/usr/bin/env bash
# Quick start, set-up command 1: install what is missing, build, run a local cluster.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh det-master det-agent det-autoscaler det
scripts/build-webui.sh
exec scripts/local-cluster.sh "$@"

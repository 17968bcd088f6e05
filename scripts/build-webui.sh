#!/usr/bin/env bash
# Builds the WebUI (webui/, TypeScript + React + uPlot) into build/webui/dist, where det-master
# finds it: installs the packages the lockfile pins when node_modules is missing or older than
# the lockfile, then type checks and `vite build`. Needs Node.js 20.19 or newer and npm.
# (`npm install --no-save` rather than `npm ci`: npm 11 leaves other platforms' optional packages,
# such as rollup's native builds, out of the lockfile, which `npm ci` then refuses.)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${DET_BUILD_DIR:-$ROOT/build}/webui/dist"
cd "$ROOT/webui"
if ! command -v npm >/dev/null; then
  echo "error: npm is missing: the WebUI needs Node.js 20.19+ and npm (scripts/install-deps.sh)" >&2
  exit 1
fi
version="$(node -p 'process.versions.node' 2>/dev/null || echo 0)"
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)'; then
  echo "error: the WebUI's build (Vite 7) needs Node.js 20.19 or newer; this is $version" >&2
  exit 1
fi
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ] ||
   [ package.json -nt node_modules/.package-lock.json ]; then
  npm install --no-save --no-audit --no-fund --loglevel=error
fi
DET_WEBUI_OUT="$OUT" npm run --silent build -- --logLevel warn

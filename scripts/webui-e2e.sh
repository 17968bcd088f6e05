#!/usr/bin/env bash
# The WebUI's end-to-end test (ctest e2e.webui): starts a cluster with `det deploy local` (no
# agent: the autoscaler starts one for the experiment), runs webui/e2e/webui.e2e.mjs (Playwright
# driving Debian's headless Chromium) against it, then stops it. Screenshots of every page go to
# build/webui-screenshots/. Exits non-zero if anything failed.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${DET_BUILD_DIR:-$ROOT/build}"
DET="$BUILD/cli/det"
[ -f "$BUILD/webui/dist/index.html" ] || { echo "FAIL: the WebUI is not built (scripts/build.sh)"; exit 1; }
if ! command -v "${CHROMIUM:-/usr/bin/chromium}" >/dev/null; then
  "$ROOT/scripts/install-deps.sh"  # Debian's chromium, through apt
fi
# What an earlier run killed at its timeout left up goes down first; its folder with it.
"$ROOT/scripts/stop-test-clusters.sh" "$DET" "${TMPDIR:-/tmp}"/det-webui.*/cluster
rm -rf "${TMPDIR:-/tmp}"/det-webui.*
RUN="$(mktemp -d "${TMPDIR:-/tmp}/det-webui.XXXXXX")"
chmod 711 "$RUN"
export DET_AUTH_FILE="$RUN/auth.json"
deploy() { "$DET" deploy local --cluster-dir "$RUN/cluster" "$@"; }
cleanup() { deploy down >/dev/null 2>&1 || true; rm -rf "$RUN"; }
trap cleanup EXIT

# Determined's own library, when it is beside the checkout (and its Python packages and root are
# here): one of its Core API tutorials, unmodified, shows its metrics in the WebUI too.
CONFORMANCE="${DET_CONFORMANCE_DIR:-$ROOT/../shared/conformance/determined-0.38.1}"
if [ "$(id -u)" = 0 ] && [ -d "$CONFORMANCE/harness/determined" ] &&
   PYTHONPATH="$CONFORMANCE/harness" /usr/bin/python3 -c 'import determined, requests, zmq' 2>/dev/null; then
  # The agents the autoscaler starts, and so their runs, find the library and Debian's python3.
  export PATH="/usr/bin:$PATH"
  export PYTHONPATH="$CONFORMANCE/harness:$ROOT/tests/data/tensorboard_stand_in:$ROOT/tests/data/ml_framework_stub${PYTHONPATH:+:$PYTHONPATH}"
  export DET_TUTORIAL_DIR="$CONFORMANCE/examples/tutorials/core_api"
else
  echo "skipping the Determined tutorial step: it needs root, $CONFORMANCE and the Python packages its README lists"
fi
deploy up --agents 0 --max-agents 1 --artificial-slots 1 > "$RUN/deploy.log"
export DET_MASTER=tcp://127.0.0.1:8090 DET_KEY_FILE="$RUN/cluster/keys/cli.key" \
  DET_MASTER_KEY_FILE="$RUN/cluster/keys/master.pub" DET_USER=admin \
  DET_PASS="$(cat "$RUN/cluster/admin-password")"
# Long enough to watch, pause and resume: 1200 batches of 50 ms (a minute) with a validation and
# a checkpoint every 20.
sed -e "s|host_path: .*|host_path: $RUN/checkpoints|" -e "s|step_seconds: .*|step_seconds: 0.05|" \
  -e "s|max_time: 200|max_time: 1200|" "$ROOT/examples/linear_regression/const.yaml" > "$RUN/const.yaml"
# A 16-trial adaptive ASHA search (the hyperparameter views and the compare page), quick.
sed -e "s|host_path: .*|host_path: $RUN/checkpoints|" -e "s|step_seconds: .*|step_seconds: 0.001|" \
  "$ROOT/examples/linear_regression/adaptive.yaml" > "$RUN/adaptive.yaml"
# A 500-trial random search that never runs (paused at once): the test writes 1,000 validation
# points per trial straight into the cluster's PostgreSQL and times the experiment page.
cat > "$RUN/wide.yaml" <<EOF
name: wide-random-search
entrypoint: python3 train.py
hyperparameters:
  learning_rate: {type: log, base: 10, minval: -4, maxval: -1}
  batch_size: {type: int, minval: 4, maxval: 64}
  optimizer: {type: categorical, vals: [adam, sgd, rmsprop]}
searcher: {name: random, metric: validation_loss, smaller_is_better: true, max_trials: 500,
           max_length: {batches: 1000}}
resources: {slots_per_trial: 1}
checkpoint_storage: {type: shared_fs, host_path: $RUN/checkpoints}
EOF
PSQL="$(ls /usr/lib/postgresql/*/bin/psql 2>/dev/null | sort -V | tail -n 1 || true)"
status=0
DET_SEARCH_CONFIG="$RUN/adaptive.yaml" DET_WIDE_CONFIG="$RUN/wide.yaml" DET_PSQL="${PSQL:-psql}" \
  DET_DB_PORT="$(cat "$RUN/cluster/postgres/port")" PGPASSWORD="$(cat "$RUN/cluster/postgres/password")" \
  DET_WEBUI_URL="http://127.0.0.1:8080/" DET_ADMIN_PASSWORD="$DET_PASS" DET_CLI="$DET" \
  DET_EXPERIMENT_CONFIG="$RUN/const.yaml" DET_MODEL_DIR="$ROOT/examples/linear_regression" \
  DET_SCREENSHOTS="$BUILD/webui-screenshots" \
  node "$ROOT/webui/e2e/webui.e2e.mjs" || status=$?
if [ "$status" != 0 ]; then
  echo "== logs"; tail -n 50 "$RUN"/cluster/logs/*.log
fi
exit "$status"

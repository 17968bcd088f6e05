#!/usr/bin/env bash
# Runs a local cluster on this host with `det deploy local` (det-master with its own PostgreSQL and
# det-autoscaler with the local provider, no agent to begin with; CURVE keys and an admin password
# made for this cluster), then runs the example experiment to completion (the autoscaler starts
# an agent for it) and prints its results.
#
#   scripts/local-cluster.sh          start, run the example, then keep running until Ctrl-C
#   scripts/local-cluster.sh --check  the same, then stop and exit 0 only if everything worked
#                                     (the end-to-end test)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${DET_BUILD_DIR:-$ROOT/build}"
DET="$BUILD/cli/det"
CHECK=0
[ "${1:-}" = "--check" ] && CHECK=1
RUN="$(mktemp -d "${TMPDIR:-/tmp}/det-local.XXXXXX")"
# Agents run as root here run tasks as `nobody`: it passes through to its work and checkpoint
# folders (it lists and reads nothing of this folder's own).
chmod 711 "$RUN"
export DET_AUTH_FILE="$RUN/auth.json"  # this cluster's login, not the user's other sessions
if [ "$CHECK" = 1 ]; then
  # The README's own path: `det deploy local up` in the default folder, with a 0700 home (as
  # /root is; as root the default folder is /var/lib/det/local, which tasks' accounts reach).
  export HOME="$RUN/home" XDG_DATA_HOME=""
  mkdir -m 700 "$HOME"
  if [ "$(id -u)" = 0 ]; then CLUSTER=/var/lib/det/local; else CLUSTER="$HOME/.local/share/det/local"; fi
  deploy() { "$DET" deploy local "$@"; }
  # What an earlier check killed at its timeout, or the WebUI's test, left up goes down first.
  "$ROOT/scripts/stop-test-clusters.sh" "$DET" /var/lib/det/local \
    "${TMPDIR:-/tmp}"/det-local.*/home/.local/share/det/local "${TMPDIR:-/tmp}"/det-webui.*/cluster
else
  CLUSTER="$RUN/cluster"
  deploy() { "$DET" deploy local --cluster-dir "$CLUSTER" "$@"; }
fi
cleanup() {
  if [ "$CHECK" = 1 ]; then deploy down --delete-data >/dev/null 2>&1 || true; fi
  deploy down >/dev/null 2>&1 || true
  if [ "$CHECK" = 1 ]; then rm -rf "$RUN"; fi
}
trap cleanup EXIT

deploy up --agents 0 --max-agents 2 --artificial-slots 2
# The master's URL and a login are all det needs (it finds the gateway and its key from the URL).
DET_PASS="$(cat "$CLUSTER/admin-password")"
export DET_MASTER=http://127.0.0.1:8080 DET_USER=admin DET_PASS
echo "== det master info"; "$DET" master info
echo "== det agent list (none yet: the autoscaler starts one when work waits)"; "$DET" agent list

# The example experiment (one trial, checkpoints under $RUN), run to completion.
sed "s|host_path: .*|host_path: $RUN/checkpoints|" "$ROOT/examples/linear_regression/const.yaml" > "$RUN/const.yaml"
echo "== det experiment create --follow examples/linear_regression/const.yaml"
experiment_ok=0
if timeout 300 "$DET" experiment create --follow "$RUN/const.yaml" "$ROOT/examples/linear_regression"; then
  experiment_ok=1
fi
id="$("$DET" --json experiment list | sed 's/^\[{"id":\([0-9]*\).*/\1/')"
echo "== results"; "$DET" experiment describe "$id"; echo; "$DET" experiment list-checkpoints "$id"
echo "== det autoscaler decisions"; "$DET" autoscaler decisions
echo "== det autoscaler instances"; "$DET" autoscaler instances
launched=0
"$DET" --json autoscaler decisions | grep -q '"launched":\["local-default-' && launched=1
seen=0
grep -q "agent local-default-[0-9a-f]* is connected" "$CLUSTER/logs/autoscaler.log" && seen=1

if [ "$CHECK" = 1 ]; then
  fail() { echo "FAIL: $1"; cat "$CLUSTER"/logs/*.log; exit 1; }
  [ "$launched" = 1 ] || fail "the autoscaler launched no agent (det autoscaler decisions)"
  [ "$seen" = 1 ] || fail "the agent the autoscaler started did not connect"
  [ "$experiment_ok" = 1 ] || fail "the example experiment did not complete"
  # Determined 0.38.1's own CLI and SDK, as its users point them at this cluster (REST on 8080).
  HARNESS="${DET_CONFORMANCE_DIR:-$ROOT/../shared/conformance/determined-0.38.1}/harness"
  if [ -d "$HARNESS" ] && /usr/bin/python3 -c 'import ruamel.yaml, requests' 2>/dev/null; then
    determined() {
      env -u DET_MASTER PYTHONPATH="$HARNESS" DET_MASTER=http://127.0.0.1:8080 \
        timeout 120 /usr/bin/python3 "$@" 2>&1
    }
    listed="$(determined -m determined.cli experiment list)" || fail "Determined's det experiment list: $listed"
    echo "$listed" | grep -Eq "^ *$id \|.*COMPLETED" ||
      fail "Determined's det experiment list does not show experiment $id COMPLETED: $listed"
    top="$(determined -c "from determined.experimental import client
client.login(master='http://127.0.0.1:8080', user='admin', password='$DET_PASS')
print(client.get_experiment($id).top_checkpoint().uuid)")" || fail "Determined's SDK: $top"
    "$DET" experiment list-checkpoints "$id" | grep -q "${top##*$'\n'}" ||
      fail "the SDK's top checkpoint ($top) is not among experiment $id's checkpoints"
    echo "Determined's CLI and SDK: OK"
  else
    echo "skipped Determined's CLI and SDK: needs ../shared/conformance/determined-0.38.1 and python3-ruamel.yaml"
  fi
  for f in master.yaml autoscaler.yaml dynamic-agent.yaml admin-password; do
    [ "$(stat -c %a "$CLUSTER/$f")" = 600 ] || fail "$f is not the owner's only (mode 600)"
  done
  # A command still running when the cluster goes down goes with it.
  marker="local-cluster-check-$$"
  "$DET" cmd run "sleep 600; echo $marker" >/dev/null
  for _ in $(seq 300); do pgrep -f "$marker" >/dev/null && break; sleep 0.1; done
  pgrep -f "$marker" >/dev/null || fail "the command did not start"
  deploy down >/dev/null
  if pgrep -f "$CLUSTER/instances" >/dev/null; then fail "agents still run after deploy down"; fi
  if pgrep -f "$marker" >/dev/null; then fail "a command still runs after deploy down"; fi
  echo "local cluster OK"
  exit 0
fi
echo
echo "cluster running from $CLUSTER (logs in logs/)"
echo "WebUI: http://127.0.0.1:8080/ (user admin, password $DET_PASS); use det with:"
echo "  export DET_MASTER=$DET_MASTER"
echo "  det user login admin      # password: $DET_PASS"
echo "Ctrl-C stops it."
trap 'exit 0' INT TERM
while true; do sleep 3600; done

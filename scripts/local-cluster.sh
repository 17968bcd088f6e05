#!/usr/bin/env bash
# Runs a local cluster on this host: det-master, one det-agent and det-autoscaler, with CURVE keys
# generated for this cluster, then shows them talking through the det CLI.
#
#   scripts/local-cluster.sh          start, show `det master info` and `det agent list`, then keep
#                                     running until Ctrl-C
#   scripts/local-cluster.sh --check  the same, then stop and exit 0 only if everything worked
#                                     (the end-to-end test)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${DET_BUILD_DIR:-$ROOT/build}"
CHECK=0
[ "${1:-}" = "--check" ] && CHECK=1
RUN="$(mktemp -d "${TMPDIR:-/tmp}/det-local.XXXXXX")"
chmod 711 "$RUN"  # as root, the local PostgreSQL runs as `postgres` and must reach $RUN/postgres
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ "$CHECK" = 1 ]; then rm -rf "$RUN"; fi
}
trap cleanup EXIT

# Keys: the master's pair, one per client, and the allow-list of client keys.
for name in master agent autoscaler cli; do "$BUILD/cli/det" keygen "$RUN/$name" >/dev/null; done
cat "$RUN/agent.pub" "$RUN/autoscaler.pub" "$RUN/cli.pub" > "$RUN/allowed_clients"

# The admin user's password, chosen here so that this script can log in and show it.
ADMIN_PASSWORD="$(head -c 18 /dev/urandom | base64 | tr '+/' '-_')"
cat > "$RUN/master.yaml" <<YAML
security:
  initial_user_password: "$ADMIN_PASSWORD"
port: 0
bus:
  host: 127.0.0.1
  gateway_port: 0
  agent_port: 0
  event_subscribe_port: 0
  event_publish_port: 0
  snapshot_port: 0
  security:
    key_file: $RUN/master.key
    allowed_clients_file: $RUN/allowed_clients
endpoints_file: $RUN/endpoints.yaml
local_db:
  data_dir: $RUN/postgres
YAML
"$BUILD/master/det-master" -c "$RUN/master.yaml" >"$RUN/master.log" 2>&1 &
pids+=($!)
for _ in $(seq 300); do [ -f "$RUN/endpoints.yaml" ] && break; sleep 0.1; done
[ -f "$RUN/endpoints.yaml" ] || { cat "$RUN/master.log"; echo "det-master did not start"; exit 1; }
port() { grep "^$1:" "$RUN/endpoints.yaml" | sed 's/.*://'; }

client_security() {
  printf 'security:\n  key_file: %s\n  server_public_key_file: %s\n' "$RUN/$1.key" "$RUN/master.pub"
}
{ echo "master_host: 127.0.0.1"; echo "master_port: $(port agent)"; echo "agent_id: local-agent";
  echo "artificial_slots: 2"; client_security agent; } > "$RUN/agent.yaml"
{ echo "master_host: 127.0.0.1"; echo "event_subscribe_port: $(port event_subscribe)";
  echo "snapshot_port: $(port snapshot)"; client_security autoscaler; } > "$RUN/autoscaler.yaml"
"$BUILD/agent/det-agent" -c "$RUN/agent.yaml" >"$RUN/agent.log" 2>&1 &
pids+=($!)
"$BUILD/autoscaler/det-autoscaler" -c "$RUN/autoscaler.yaml" >"$RUN/autoscaler.log" 2>&1 &
pids+=($!)

export DET_MASTER="127.0.0.1:$(port gateway)" DET_KEY_FILE="$RUN/cli.key" DET_MASTER_KEY_FILE="$RUN/master.pub"
export DET_USER=admin DET_PASS="$ADMIN_PASSWORD" DET_AUTH_FILE="$RUN/auth.json"
ok=0
for _ in $(seq 100); do
  if "$BUILD/cli/det" --json agent list 2>/dev/null | grep -q '"id":"local-agent","state":"connected"'; then ok=1; break; fi
  sleep 0.1
done
echo "== det master info"; "$BUILD/cli/det" master info
echo "== det agent list"; "$BUILD/cli/det" agent list
for _ in $(seq 50); do grep -q "agent local-agent is connected" "$RUN/autoscaler.log" && break; sleep 0.1; done
echo "== det-autoscaler saw:"; grep "agent local-agent" "$RUN/autoscaler.log" || true

# The example experiment (one trial, checkpoints under $RUN), run to completion.
sed "s|host_path: .*|host_path: $RUN/checkpoints|" "$ROOT/examples/linear_regression/const.yaml" > "$RUN/const.yaml"
echo "== det experiment create examples/linear_regression/const.yaml"
experiment_ok=0
if "$BUILD/cli/det" experiment create "$RUN/const.yaml" "$ROOT/examples/linear_regression"; then
  id="$("$BUILD/cli/det" --json experiment list | sed 's/^\[{"id":\([0-9]*\).*/\1/')"
  timeout 300 "$BUILD/cli/det" experiment wait "$id" && experiment_ok=1
  "$BUILD/cli/det" experiment describe "$id"
fi

if [ "$CHECK" = 1 ]; then
  grep -q "agent local-agent is connected" "$RUN/autoscaler.log" || { echo "FAIL: autoscaler did not see the agent"; cat "$RUN"/*.log; exit 1; }
  [ "$ok" = 1 ] || { echo "FAIL: the agent did not join"; cat "$RUN"/*.log; exit 1; }
  [ "$experiment_ok" = 1 ] || { echo "FAIL: the example experiment did not complete"; cat "$RUN"/*.log; exit 1; }
  echo "local cluster OK"
  exit 0
fi
echo
echo "cluster running in $RUN (logs there); use det with:"
echo "  export DET_MASTER=$DET_MASTER DET_KEY_FILE=$DET_KEY_FILE DET_MASTER_KEY_FILE=$DET_MASTER_KEY_FILE"
echo "  det user login admin      # password: $ADMIN_PASSWORD"
echo "Ctrl-C stops it."
wait

#!/usr/bin/env bash
# The GPU check: on a host with NVIDIA GPUs, a private cluster (det deploy local, one agent with
# slot_type auto) must
#   1. offer exactly the GPUs nvidia-smi lists, as cuda slots with their UUIDs;
#   2. give a one-slot command exactly one GPU (CUDA_VISIBLE_DEVICES = that slot's UUID), which
#      PyTorch, when the python3 used has it, sees as its only device and keeps busy;
#   3. report that GPU's utilisation above 0 while it works (the agent's nvidia-smi sampler);
#   4. run the example experiment to completion on a GPU slot.
# Exits 0 when all hold, 1 naming what did not, and 77 (ctest's skip) when the host has no NVIDIA
# driver. ctest runs it as e2e.gpu; CI's machines have no GPU, so there it says it skipped.
#
#   scripts/gpu-check.sh     (DET_BUILD_DIR: the build; DET_GPU_CHECK_PYTHON: the python3 to use)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${DET_BUILD_DIR:-$ROOT/build}"
DET="$BUILD/cli/det"
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu check skipped: no working nvidia-smi on this host (no NVIDIA GPU or driver)"
  exit 77
fi
# Tasks of a root agent run as nobody, which may not reach a python3 under a user's home.
PY="${DET_GPU_CHECK_PYTHON:-$(command -v python3)}"
RUN="$(mktemp -d "${TMPDIR:-/tmp}/det-gpu.XXXXXX")"
chmod 711 "$RUN"
CLUSTER="$RUN/cluster"
export DET_AUTH_FILE="$RUN/auth.json"
cleanup() {
  "$DET" deploy local --cluster-dir "$CLUSTER" down --delete-data >/dev/null 2>&1 || true
  rm -rf "$RUN"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $1"
  tail -n 30 "$CLUSTER"/logs/*.log 2>/dev/null || true
  exit 1
}
json() { "$PY" -c "import json, sys; d = json.load(sys.stdin); print($1)"; }

"$DET" deploy local --cluster-dir "$CLUSTER" up --agents 1 --max-agents 1 >/dev/null
export DET_MASTER=tcp://127.0.0.1:8090 DET_KEY_FILE="$CLUSTER/keys/cli.key" \
  DET_MASTER_KEY_FILE="$CLUSTER/keys/master.pub" DET_USER=admin \
  DET_PASS="$(cat "$CLUSTER/admin-password")"

echo "== 1. slots: the GPUs nvidia-smi lists"
want="$(nvidia-smi --query-gpu=uuid --format=csv,noheader | sort | tr '\n' ' ')"
got=""
for _ in $(seq 100); do
  got="$("$DET" --json agent list |
    json "' '.join(sorted(s['uuid'] for a in d for s in a['devices'] if s['type'] == 'cuda')) + ' ' if d else ''")"
  [ -n "$got" ] && break
  sleep 0.1
done
"$DET" slot list
[ "$got" = "$want" ] || fail "the agent offers cuda slots [$got], nvidia-smi lists [$want]"

echo "== 2. a one-slot command gets one GPU"
cat > "$RUN/gpu.py" <<'EOF'
import os, sys, time
print("visible", os.environ.get("CUDA_VISIBLE_DEVICES", ""), flush=True)
try:
    import torch
except ImportError:
    print("torch absent", flush=True)
    sys.exit(0)
print("torch devices", torch.cuda.device_count(), torch.cuda.get_device_name(0), flush=True)
a = torch.randn(4096, 4096, device="cuda")
end = time.time() + 15
while time.time() < end:
    for _ in range(20):
        a @ a
    torch.cuda.synchronize()
print("busy done", flush=True)
EOF
chmod 644 "$RUN/gpu.py"
task="$("$DET" --json cmd run --slots 1 "$PY $RUN/gpu.py" | json "d['task_id']")"
busy=0
for _ in $(seq 40); do
  util="$("$DET" --json agent list | json "max([u['utilization_percent'] for a in d for u in a['utilization']] or [0])")"
  if [ "$util" -gt 0 ]; then busy=1; break; fi
  sleep 0.5
done
"$DET" task wait "$task" || true
logs="$("$DET" task logs "$task")"
echo "$logs"
visible="$(sed -n 's/.*visible \([^ ]*\)$/\1/p' <<<"$logs" | head -n 1)"
[ -n "$visible" ] && [[ " $want" == *" $visible "* ]] ||
  fail "the command was given CUDA_VISIBLE_DEVICES=\"$visible\", not one of the GPUs' UUIDs"
if grep -q "torch absent" <<<"$logs"; then
  echo "(PyTorch is not importable by $PY: its device count and the utilisation are not checked)"
else
  grep -q "torch devices 1 " <<<"$logs" || fail "PyTorch in the command does not see exactly one GPU"
  grep -q "busy done" <<<"$logs" || fail "the command's GPU work did not finish"
  echo "== 3. utilisation reported while the GPU works"
  [ "$busy" = 1 ] || fail "det agent list never showed the GPU busy while the command ran"
fi

echo "== 4. the example experiment on a GPU slot"
sed "s|host_path: .*|host_path: $RUN/checkpoints|; s|entrypoint: python3|entrypoint: $PY|" \
  "$ROOT/examples/linear_regression/const.yaml" > "$RUN/const.yaml"
timeout 300 "$DET" experiment create --follow "$RUN/const.yaml" "$ROOT/examples/linear_regression" |
  tail -n 3 || fail "the example experiment did not complete"
"$DET" --json experiment list | json "d[0]['state']" | grep -qx COMPLETED ||
  fail "the example experiment did not complete"
echo "gpu check OK"

#!/usr/bin/env bash
# Stops the `det deploy local` clusters an earlier end-to-end test left up (e2e.local_cluster,
# e2e.webui): a run killed at ctest's timeout (SIGKILL: its EXIT trap does not run) keeps its
# master and autoscaler running, holding the ports every later `det deploy local` needs. ctest
# runs one of those tests at a time (RESOURCE_LOCK det_deploy_local), so none is in use when the
# next one calls this.
#   scripts/stop-test-clusters.sh DET CLUSTER_DIR...   (folders that do not exist are skipped)
set -uo pipefail
DET=$1
shift
for cluster in "$@"; do
  [ -d "$cluster" ] || continue
  if "$DET" deploy local --cluster-dir "$cluster" status >/dev/null 2>&1; then
    echo "stopping the cluster an earlier, killed run left in $cluster"
  fi
  "$DET" deploy local --cluster-dir "$cluster" down >/dev/null 2>&1 || true
done
exit 0

#!/usr/bin/env bash
# What a change touches, in minutes (scripts/test.sh quick [PATH...] runs this):
#   scripts/test-quick.sh [PATH...]
# PATHs (files or folders) default to what differs from the upstream branch (or from HEAD when
# there is none): committed, staged, unstaged and untracked. Each path names the labels it
# touches (a product folder: its own; tests/unit/X_test.cc: its binary's; tests/integration/
# X_test.cc: that file's entry), and then:
#   1. format of the touched C++ files and the layering check (seconds);
#   2. an incremental build of what those tests need (build/, configured if missing);
#   3. the unit tests of the touched folders (ctest -L 'unit.<folder>'), the integration entries
#      whose own files changed, the multi-host tests when tests/multihost changed, and the quick
#      start's end-to-end check (e2e.local_cluster, 10 s) when a product folder changed.
# A folder's integration tests are not all run here: `ctest --test-dir build -L master` runs every
# test labelled master (tests/README.md lists the labels); scripts/test.sh runs everything.
# Exits non-zero when anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."
START=$(date +%s)

changed_paths() {
  local base
  base=$(git rev-parse --verify --quiet '@{upstream}' 2>/dev/null || git rev-parse HEAD)
  { git diff --name-only "$base"; git diff --name-only --cached; git diff --name-only
    git ls-files --others --exclude-standard; } | sort -u
}
PATHS=("$@")
if [ ${#PATHS[@]} -eq 0 ]; then mapfile -t PATHS < <(changed_paths); fi
if [ ${#PATHS[@]} -eq 0 ]; then
  echo "test-quick: nothing changed (give PATHs to test what they touch)"
  exit 0
fi

declare -A UNIT=() INTEGRATION=()
PRODUCT=false MULTIHOST=false WEBUI=false
# The unit binary's folder that tests/unit/NAME.cc is built into (tests/CMakeLists.txt).
unit_folder_of() {
  awk -v file="unit/$1" '/^det_unit_tests\(/ {folder=$1; sub(/det_unit_tests\(/, "", folder)}
    index($0, file) {print folder; exit}' tests/CMakeLists.txt
}
for path in "${PATHS[@]}"; do
  path=${path%/}
  case "$path" in
    common|common/*) UNIT[common]=1; PRODUCT=true ;;
    bus|bus/*) UNIT[bus]=1; PRODUCT=true ;;
    storage|storage/*) UNIT[storage]=1; PRODUCT=true ;;
    provider|provider/*) UNIT[autoscaler]=1; UNIT[cloud]=1; PRODUCT=true ;;
    master|master/*) UNIT[master]=1; PRODUCT=true ;;
    agent|agent/*) UNIT[agent]=1; PRODUCT=true ;;
    autoscaler|autoscaler/*) UNIT[autoscaler]=1; PRODUCT=true ;;
    cloud_aws|cloud_aws/*|cloud_gcp|cloud_gcp/*|object_store|object_store/*) UNIT[cloud]=1; PRODUCT=true ;;
    cli|cli/*) UNIT[cli]=1; PRODUCT=true ;;
    harness|harness/*) INTEGRATION[harness_s3]=1; PRODUCT=true ;;
    webui|webui/*) WEBUI=true ;;
    tests/unit/*_test.cc)
      folder=$(unit_folder_of "$(basename "$path")")
      [ -n "$folder" ] && UNIT[$folder]=1 ;;
    tests/integration/*_test.cc) INTEGRATION[$(basename "$path" _test.cc)]=1 ;;
    tests/multihost|tests/multihost/*) MULTIHOST=true ;;
    tests/fakes/*) UNIT[cloud]=1 ;;
  esac
done

FAILED=()
echo "=== format and layering of what changed"
mapfile -t cxx < <(printf '%s\n' "${PATHS[@]}" | grep -E '\.(cc|h)$' | while read -r f; do
  [ -f "$f" ] && echo "$f"; done)
if [ ${#cxx[@]} -gt 0 ]; then clang-format --dry-run -Werror "${cxx[@]}" || FAILED+=(format); fi
python3 scripts/check_layering.py || FAILED+=(layering)

TARGETS=()
for folder in "${!UNIT[@]}"; do TARGETS+=("unit_$folder"); done
if [ ${#INTEGRATION[@]} -gt 0 ]; then TARGETS+=(integration_tests); fi
if $PRODUCT; then TARGETS+=(det det-master det-agent det-autoscaler); fi
if $MULTIHOST; then TARGETS+=(multihost_tests); fi
echo "=== build: ${TARGETS[*]:-nothing}"
if [ ${#TARGETS[@]} -gt 0 ]; then scripts/build.sh "${TARGETS[@]}" || FAILED+=(build); fi
if $WEBUI; then scripts/build-webui.sh || FAILED+=(webui-build); fi

run_ctest() {  # run_ctest WHAT CTEST_ARGS...
  local what=$1
  shift
  echo "=== $what"
  ctest --test-dir build --output-on-failure -j3 "$@" || FAILED+=("$what")
}
if [ ${#FAILED[@]} -eq 0 ]; then
  if [ ${#UNIT[@]} -gt 0 ]; then
    run_ctest "unit tests" -L "^unit\.($(IFS='|'; echo "${!UNIT[*]}"))$"
  fi
  if [ ${#INTEGRATION[@]} -gt 0 ]; then
    run_ctest "integration tests" -R "^integration\.($(IFS='|'; echo "${!INTEGRATION[*]}"))$"
  fi
  if $MULTIHOST; then run_ctest "multi-host tests" -R '^(Fault|CloudFault|FallbackCloudFault|SpotCloudFault|Security)Test\.'; fi
  if $WEBUI; then run_ctest "WebUI tests" -R '^(webui\.unit|e2e\.webui)$'; fi
  if $PRODUCT; then run_ctest "the quick start's check" -R '^e2e\.local_cluster$'; fi
fi

echo
if [ ${#FAILED[@]} -ne 0 ]; then
  echo "quick: failed: ${FAILED[*]} (after $(( $(date +%s) - START ))s)"
  exit 1
fi
echo "quick: passed in $(( $(date +%s) - START ))s"

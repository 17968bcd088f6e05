#!/usr/bin/env bash
# Quick start, set-up command 2: install what is missing, build, and run every test:
#   1. unit, integration and end-to-end tests (ctest labels unit, integration, e2e)
#   2. the benchmarks in short mode (ctest label bench)
#   3. the unit tests again under ASan+UBSan and the threaded parts' tests under TSan
#      (scripts/sanitizers.sh), and every libFuzzer target for a bounded time (clang;
#      DET_FUZZ_SECONDS per fuzzer, default 12: about a minute in all). scripts/fuzz.sh runs
#      them, here briefly and on its own as the soak mode.
# Beside all three, at a lower priority, the format and lint checks (.clang-format, .clang-tidy
# without the static analyzer: scripts/lint.sh quick), whose verdict is read at the end: the
# tests mostly wait on trials, timeouts and faults, and lint fills the idle core. Exits non-zero
# if anything fails (after every stage has run, so that one failure does not hide another).
# Prints the time each stage took.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZ_SECONDS="${DET_FUZZ_SECONDS:-12}"
stage() { echo; echo "=== $1"; STAGE_START=$(date +%s); }
done_stage() { echo "--- $1 took $(( $(date +%s) - STAGE_START ))s"; }
TOTAL_START=$(date +%s)

stage "install dependencies"; scripts/install-deps.sh; done_stage deps
stage "build"; scripts/build.sh; done_stage build
# The verdict travels in a file: bash may forget a background job's status by the time it is
# waited for (its pid reused by a later child over a 40-minute run: "pid N is not a child").
rm -f build/lint.rc
(
  rc=0
  nice -n 10 scripts/lint.sh quick > build/lint.log 2>&1 || rc=$?
  echo "$rc" > build/lint.rc
) &
LINT_PID=$!
FAILED=()

stage "unit, integration and e2e tests"
# The multi-host suite appends a row per fault (recovery time) to this report.
rm -f build/multihost-report.md
DET_MULTIHOST_REPORT="$PWD/build/multihost-report.md" \
  ctest --test-dir build --output-on-failure -L 'unit|integration|e2e' -j2 || FAILED+=(tests)
if [ -s build/multihost-report.md ]; then
  echo "fault report (multihost_tests): | fault | outcome | recovery | data lost |"
  cat build/multihost-report.md
fi
done_stage tests

stage "benchmarks (short mode)"
if ! ctest --test-dir build --output-on-failure -L bench -V |
  grep -vE '^[0-9]+: Test command|^$' | tail -40; then
  FAILED+=(benchmarks)
fi
done_stage bench

stage "sanitizers (ASan+UBSan unit tests, TSan concurrency tests) and fuzzing (clang)"
scripts/sanitizers.sh || FAILED+=(sanitizers)
DET_FUZZ_BUILD=1 scripts/fuzz.sh "$FUZZ_SECONDS" || FAILED+=(fuzzing)
done_stage sanitizers

stage "format and lint (started after the build)"
wait "$LINT_PID" 2>/dev/null || true
[ "$(cat build/lint.rc 2>/dev/null)" = 0 ] || FAILED+=(lint)
cat build/lint.log
done_stage lint

echo
if [ ${#FAILED[@]} -ne 0 ]; then
  echo "failed: ${FAILED[*]} (after $(( $(date +%s) - TOTAL_START ))s)"
  exit 1
fi
echo "all tests passed in $(( $(date +%s) - TOTAL_START ))s"

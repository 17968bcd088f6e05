#!/usr/bin/env bash
# Quick start, set-up command 2: install what is missing, build, and run every test:
#   1. unit, integration and end-to-end tests (ctest labels unit, integration, e2e), and beside
#      them the format and lint checks (.clang-format, .clang-tidy)
#   2. the benchmarks in short mode (ctest label bench)
#   3. the unit tests again under ASan+UBSan and the threaded parts' tests under TSan
#      (scripts/sanitizers.sh), and every libFuzzer target for a bounded time (clang;
#      DET_FUZZ_SECONDS per fuzzer, default 12: about a minute in all). scripts/fuzz.sh runs
#      them, here briefly and on its own as the soak mode.
# Exits non-zero if anything fails. Prints the time each stage took.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZ_SECONDS="${DET_FUZZ_SECONDS:-12}"
stage() { echo; echo "=== $1"; STAGE_START=$(date +%s); }
done_stage() { echo "--- $1 took $(( $(date +%s) - STAGE_START ))s"; }
TOTAL_START=$(date +%s)

stage "install dependencies"; scripts/install-deps.sh; done_stage deps
stage "build"; scripts/build.sh; done_stage build
# Lint (CPU-bound) runs beside the tests (mostly waiting on trials, timeouts and faults), at a
# lower priority; its verdict is read once they are done.
stage "unit, integration and e2e tests, with format and lint beside them"
nice -n 10 scripts/lint.sh > build/lint.log 2>&1 &
LINT_PID=$!
# The multi-host suite appends a row per fault (recovery time) to this report.
rm -f build/multihost-report.md
TESTS_OK=0
DET_MULTIHOST_REPORT="$PWD/build/multihost-report.md" \
  ctest --test-dir build --output-on-failure -L 'unit|integration|e2e' -j2 || TESTS_OK=$?
if [ -s build/multihost-report.md ]; then
  echo "fault report (multihost_tests): | fault | outcome | recovery | data lost |"
  cat build/multihost-report.md
fi
LINT_OK=0
wait "$LINT_PID" || LINT_OK=$?
echo "--- format and lint:"
cat build/lint.log
if [ "$LINT_OK" -ne 0 ] || [ "$TESTS_OK" -ne 0 ]; then
  echo "failed: tests exit $TESTS_OK, format and lint exit $LINT_OK"
  exit 1
fi
done_stage "tests and lint"
stage "benchmarks (short mode)"
ctest --test-dir build --output-on-failure -L bench -V | grep -vE '^[0-9]+: Test command|^$' | tail -40
done_stage bench
stage "sanitizers (ASan+UBSan unit tests, TSan concurrency tests) and fuzzing (clang)"
scripts/sanitizers.sh
DET_FUZZ_BUILD=1 scripts/fuzz.sh "$FUZZ_SECONDS"
done_stage sanitizers
echo
echo "all tests passed in $(( $(date +%s) - TOTAL_START ))s"

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
# tests mostly wait on trials, timeouts and faults, and lint fills the idle core. A private Docker
# engine and registries (scripts/docker-test-engine.sh, in build/docker-test) are prepared beside
# the build and serve the docker runtime's real-engine tests and the container start benchmark;
# they are stopped by pid after the benchmarks (or whenever this script exits). Exits non-zero
# if anything fails (after every stage has run, so that one failure does not hide another).
# Prints the time each stage took.
#
#   scripts/test.sh quick [PATH...]   what a change touches, in minutes: format and layering of the
#                                     touched files, an incremental build, the touched folders'
#                                     unit tests, the changed integration files, the quick start's
#                                     check (scripts/test-quick.sh says exactly what)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = quick ]; then
  shift
  exec scripts/test-quick.sh "$@"
fi
FUZZ_SECONDS="${DET_FUZZ_SECONDS:-12}"
stage() { echo; echo "=== $1"; STAGE_START=$(date +%s); }
done_stage() { echo "--- $1 took $(( $(date +%s) - STAGE_START ))s"; }
TOTAL_START=$(date +%s)

stage "install dependencies"; scripts/install-deps.sh; done_stage deps

# The Docker engine for the real-engine tests: its image's root file system (debootstrap, about a
# minute, mostly the network) is made beside the build. As root only (dockerd); without it those
# tests skip and say so.
DOCKER_DIR=build/docker-test
rm -f build/docker-engine.rc
if [ "$(id -u)" -eq 0 ]; then
  mkdir -p build
  # On any exit; a start still under way is waited for first, or it would start after the stop.
  trap 'wait "${DOCKER_PID:-}" 2>/dev/null; scripts/docker-test-engine.sh stop "$DOCKER_DIR" || true' EXIT
  (
    rc=0
    scripts/docker-test-engine.sh start "$DOCKER_DIR" > build/docker-engine.log 2>&1 ||
      rc=$?
    echo "$rc" > build/docker-engine.rc
  ) &
  DOCKER_PID=$!
fi

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

if [ -n "${DOCKER_PID:-}" ]; then
  stage "docker engine and registries for the real-engine tests"
  wait "$DOCKER_PID" 2>/dev/null || true
  cat build/docker-engine.log
  [ "$(cat build/docker-engine.rc 2>/dev/null)" = 0 ] || FAILED+=(docker-engine)
  done_stage docker-engine
fi

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
if [ -n "${DOCKER_PID:-}" ]; then
  scripts/docker-test-engine.sh stop "$DOCKER_DIR" || FAILED+=(docker-engine-stop)
fi

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

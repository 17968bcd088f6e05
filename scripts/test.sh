#!/usr/bin/env bash
# Quick start, set-up command 2: install what is missing, build, and run every test:
#   1. integration and end-to-end tests (ctest labels integration, e2e; and the WebUI's unit
#      tests), four at a time, the costliest first
#   2. the benchmarks in short mode (ctest label bench)
#   3. every unit test under ASan+UBSan, a cross-section of the integration tests against
#      sanitized binaries, the threaded parts' tests under TSan (scripts/sanitizers.sh), and every
#      libFuzzer target for a bounded time (clang; DET_FUZZ_SECONDS per fuzzer, default 12, two at
#      a time). scripts/fuzz.sh runs them, here briefly and on its own as the soak mode.
# The unit tests run once, sanitized: the plain tree builds everything but them
# (everything_but_unit_tests), which saves compiling them twice. `ctest -L unit` in build/ after
# `ninja -C build unit_tests` runs them plain, as the quick mode does.
# Beside the tests and benchmarks, at a lower priority: the format and lint checks (.clang-format,
# .clang-tidy without the static analyzer: scripts/lint.sh quick) and the build of stage 3's
# trees (scripts/sanitizers.sh build), on whatever CPU the tests leave. (Measured cold on two
# cores: the tests leave little, 0% idle with the real clients' Python, PostgreSQL and the
# processes under test, so the whole command is CPU-bound and its time is its total CPU; the order
# of the stages only decides what waits.) A private Docker engine and registries (scripts/docker-test-engine.sh,
# in build/docker-test) are prepared beside the build and serve the docker runtime's real-engine
# tests and the container start benchmark; they are stopped by pid after the benchmarks (or
# whenever this script exits). Exits non-zero if anything fails (after every stage has run, so
# that one failure does not hide another). Prints the time each stage took.
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

stage "build"; scripts/build.sh everything_but_unit_tests; scripts/build-webui.sh; done_stage build
# Two jobs beside the tests, whose verdicts travel in files (bash may forget a background job's
# status by the time it is waited for: its pid reused by a later child over a long run): lint at
# nice 10, and the sanitizer and fuzzer trees' builds at nice 19, which the tests' processes always
# come before.
# background NAME NICENESS COMMAND...: runs it with its output in build/NAME.log, status in .rc.
background() {
  local name=$1 niceness=$2
  shift 2
  rm -f "build/$name.rc"
  (
    rc=0
    nice -n "$niceness" "$@" > "build/$name.log" 2>&1 || rc=$?
    echo "$rc" > "build/$name.rc"
  ) &
}
# verdict PID NAME [LINES]: waits for it, prints its log (the last LINES when given), and says
# whether it passed.
verdict() {
  wait "$1" 2>/dev/null || true
  if [ -n "${3:-}" ]; then tail -n "$3" "build/$2.log"; else cat "build/$2.log"; fi
  [ "$(cat "build/$2.rc" 2>/dev/null)" = 0 ]
}
background lint 10 scripts/lint.sh quick
LINT_PID=$!
background sanitizer-build 19 scripts/sanitizers.sh build
SANITIZER_BUILD_PID=$!
FAILED=()

if [ -n "${DOCKER_PID:-}" ]; then
  stage "docker engine and registries for the real-engine tests"
  wait "$DOCKER_PID" 2>/dev/null || true
  cat build/docker-engine.log
  [ "$(cat build/docker-engine.rc 2>/dev/null)" = 0 ] || FAILED+=(docker-engine)
  done_stage docker-engine
fi

stage "integration and e2e tests"
# The multi-host suite appends a row per fault (recovery time) to this report. Four at a time:
# each entry mostly waits (clusters starting, trials running, faults' timeouts), and the costliest
# start first (their COST in tests/CMakeLists.txt).
rm -f build/multihost-report.md
DET_MULTIHOST_REPORT="$PWD/build/multihost-report.md" \
  ctest --test-dir build --output-on-failure -L 'integration|e2e|unit\.webui' -j4 || FAILED+=(tests)
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

stage "unit tests and sanitizers (ASan+UBSan unit tests, TSan concurrency tests) and fuzzing (clang)"
echo "(their trees were built beside the tests; the build's last lines:)"
verdict "$SANITIZER_BUILD_PID" sanitizer-build 5 || FAILED+=(sanitizer-build)
scripts/sanitizers.sh || FAILED+=(sanitizers)
DET_FUZZ_BUILD=0 scripts/fuzz.sh "$FUZZ_SECONDS" || FAILED+=(fuzzing)
done_stage sanitizers

stage "format and lint (started after the build)"
verdict "$LINT_PID" lint || FAILED+=(lint)
done_stage lint

echo
if [ ${#FAILED[@]} -ne 0 ]; then
  echo "failed: ${FAILED[*]} (after $(( $(date +%s) - TOTAL_START ))s)"
  exit 1
fi
echo "all tests passed in $(( $(date +%s) - TOTAL_START ))s"

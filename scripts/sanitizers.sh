#!/usr/bin/env bash
# The tests under clang's sanitizers, each in a build tree of its own:
#   scripts/sanitizers.sh        what scripts/test.sh runs (sized to fit CI's time):
#                                  every unit test under ASan+UBSan (build-asan), and the tests of
#                                  the threaded parts (concurrency_tests: bus, RPC workers, pool
#                                  workers, Docker client, processes) under TSan (build-tsan)
#   scripts/sanitizers.sh full   the soak mode: also every unit test under TSan, and the
#                                integration and multi-host tests against det-master, det-agent
#                                and det-autoscaler built with ASan+UBSan (build-asan-full);
#                                about an hour on two cores
# A sanitizer report fails the test it happens in (ASan, UBSan: -fno-sanitize-recover; TSan:
# halt_on_error). Suppressions: tests/tsan.supp (each with its reason). Exits non-zero on any
# failure.
set -euo pipefail
cd "$(dirname "$0")/.."
MODE="${1:-quick}"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/tsan.supp"

configure() {  # configure DIR CMAKE_OPTIONS...
  local dir=$1
  shift
  if [ ! -f "$dir/build.ninja" ]; then
    CC=clang CXX=clang++ cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug "$@" >/dev/null
  fi
}

# run_ctest DIR CTEST_ARGS...: the summary when every test passes; the failing tests' whole
# output (the sanitizer's report with it) when one fails.
run_ctest() {
  local dir=$1 log
  shift
  log=$(mktemp)
  if ctest --test-dir "$dir" --output-on-failure "$@" >"$log" 2>&1; then
    tail -3 "$log"
    rm -f "$log"
  else
    grep -v ' Passed \+[0-9.]\+ sec$' "$log" | tail -600  # the failures and the summary
    rm -f "$log"
    return 1
  fi
}

echo "--- ASan+UBSan: unit tests (build-asan)"
configure build-asan -DDET_SANITIZE=ON -DDET_FUZZ=ON -DDET_UNIT_ONLY=ON
ninja -C build-asan unit_tests
run_ctest build-asan -L unit -j2

echo "--- TSan: concurrency tests (build-tsan)"
configure build-tsan -DDET_TSAN=ON -DDET_UNIT_ONLY=ON
if [ "$MODE" = full ]; then TSAN_TARGETS=(concurrency_tests unit_tests); else TSAN_TARGETS=(concurrency_tests); fi
ninja -C build-tsan "${TSAN_TARGETS[@]}"
run_ctest build-tsan -L tsan -j2
[ "$MODE" = full ] || exit 0

echo "--- TSan: every unit test"
run_ctest build-tsan -L unit -j2

echo "--- ASan+UBSan: integration and multi-host tests against sanitized binaries (build-asan-full)"
configure build-asan-full -DDET_SANITIZE=ON
ninja -C build-asan-full integration_tests multihost_tests
# The tests find det-master, det-agent, det-autoscaler and det under DET_BUILD_DIR: the
# sanitized ones. A report in one of those processes makes it exit non-zero, which fails its test.
DET_BUILD_DIR="$PWD/build-asan-full" run_ctest build-asan-full -L 'integration|e2e' \
  -E 'webui|local_cluster' -j2

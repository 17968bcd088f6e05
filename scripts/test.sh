#!/usr/bin/env bash
# Quick start, set-up command 2: install what is missing, build, and run every test:
#   1. format and lint checks (.clang-format, .clang-tidy)
#   2. unit, integration and end-to-end tests (ctest labels unit, integration, e2e)
#   3. the benchmarks in short mode (ctest label bench)
#   4. the unit tests again under ASan+UBSan, and the libFuzzer target for a bounded time (clang)
# Exits non-zero if anything fails. Prints the time each stage took.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZ_SECONDS="${DET_FUZZ_SECONDS:-30}"
stage() { echo; echo "=== $1"; STAGE_START=$(date +%s); }
done_stage() { echo "--- $1 took $(( $(date +%s) - STAGE_START ))s"; }
TOTAL_START=$(date +%s)

stage "install dependencies"; scripts/install-deps.sh; done_stage deps
stage "build"; scripts/build.sh; done_stage build
stage "format and lint"; scripts/lint.sh; done_stage lint
stage "unit, integration and e2e tests"
ctest --test-dir build --output-on-failure -L 'unit|integration|e2e' -j2
done_stage tests
stage "benchmarks (short mode)"
ctest --test-dir build --output-on-failure -L bench -V | grep -vE '^[0-9]+: Test command|^$' | tail -40
done_stage bench
stage "sanitizers: ASan+UBSan unit tests and fuzzing (clang)"
if [ ! -f build-asan/build.ninja ]; then
  CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DDET_SANITIZE=ON -DDET_FUZZ=ON -DDET_UNIT_ONLY=ON >/dev/null
fi
ninja -C build-asan unit_tests envelope_fuzzer
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -L unit -j2
mkdir -p build-asan/fuzz-corpus
cp -n tests/fuzz/corpus/* build-asan/fuzz-corpus/ 2>/dev/null || true
build-asan/tests/envelope_fuzzer -max_total_time="$FUZZ_SECONDS" -max_len=4096 \
  -print_final_stats=1 build-asan/fuzz-corpus 2>&1 | grep -E "^(#[0-9]+ +DONE|stat::number_of_executed_units|Done|==[0-9]+==ERROR)" || true
test "${PIPESTATUS[0]}" -eq 0
done_stage sanitizers
echo
echo "all tests passed in $(( $(date +%s) - TOTAL_START ))s"

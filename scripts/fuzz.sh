#!/usr/bin/env bash
# The libFuzzer targets (tests/fuzz/*_fuzzer.cc), built with ASan+UBSan in build-asan (clang):
#   scripts/fuzz.sh [SECONDS_PER_FUZZER] [FUZZER...]
# Runs each named fuzzer (default: all of them, DET_FUZZ_JOBS at a time, default 2) for
# SECONDS_PER_FUZZER (default 600: the soak
# mode; scripts/test.sh runs them briefly through this script). Each starts from its seeds in
# tests/fuzz/corpus/<name>/ (with the tokens of tests/fuzz/<name>.dict) and from what earlier
# runs kept: new corpus entries go to
# build-asan/fuzz-corpus/<name>/, crash, leak, timeout and out-of-memory reproducers to
# build-asan/fuzz-findings/<name>-*, and each run's output to build-asan/fuzz-logs/<name>.log.
# Prints a table (executions, exec/s, corpus size, new entries, findings) and the report of each
# finding. A fuzzer stops at its first finding. Exits non-zero if any fuzzer had one.
#
# For a long soak, configure the tree's libraries at -O1 first (several times the executions per
# second): cmake -B build-asan -DDET_FUZZ_LIB_OPTIMIZATION=-O1.
#
# Environment: DET_FUZZ_MAX_LEN (largest input, default 4096), DET_FUZZ_TIMEOUT (seconds one
# input may take before it counts as a hang, default 10), DET_FUZZ_BUILD=0 to skip the build.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_FUZZER="${1:-600}"
shift || true
BUILD=build-asan

ALL=()
for source in tests/fuzz/*_fuzzer.cc; do ALL+=("$(basename "$source" .cc)"); done
FUZZERS=("$@")
if [ ${#FUZZERS[@]} -eq 0 ]; then FUZZERS=("${ALL[@]}"); fi
for name in "${FUZZERS[@]}"; do
  if [ ! -f "tests/fuzz/$name.cc" ]; then
    echo "fuzz.sh: no fuzzer $name; known: ${ALL[*]}" >&2
    exit 2
  fi
done

if [ "${DET_FUZZ_BUILD:-1}" != 0 ]; then
  if [ ! -f "$BUILD/build.ninja" ]; then
    CC=clang CXX=clang++ cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
      -DDET_SANITIZE=ON -DDET_FUZZ=ON -DDET_UNIT_ONLY=ON >/dev/null
  fi
  ninja -C "$BUILD" "${FUZZERS[@]}"
fi

mkdir -p "$BUILD/fuzz-corpus" "$BUILD/fuzz-findings" "$BUILD/fuzz-logs"
stat_of() { sed -n "s/^stat::$1: *//p" "$2" | tail -1; }
# run_fuzzer NAME: one fuzzer for SECONDS_PER_FUZZER; its exit status in fuzz-logs/NAME.rc.
run_fuzzer() {
  local name=$1 corpus="$BUILD/fuzz-corpus/$1" log="$BUILD/fuzz-logs/$1.log" status=0
  # New entries are written to the first folder; the seeds are read from the second.
  local dict=()
  if [ -f "tests/fuzz/$name.dict" ]; then dict=(-dict="tests/fuzz/$name.dict"); fi
  ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}" \
    "$BUILD/tests/$name" -max_total_time="$SECONDS_PER_FUZZER" -max_len="${DET_FUZZ_MAX_LEN:-4096}" \
    -timeout="${DET_FUZZ_TIMEOUT:-10}" -print_final_stats=1 "${dict[@]}" \
    -artifact_prefix="$BUILD/fuzz-findings/$name-" "$corpus" "tests/fuzz/corpus/$name" \
    >"$log" 2>&1 || status=$?
  echo "$status" >"$BUILD/fuzz-logs/$name.rc"
}
# DET_FUZZ_JOBS fuzzers at a time (default 2: one per core here).
declare -A BEFORE=()
running=0
for name in "${FUZZERS[@]}"; do
  mkdir -p "$BUILD/fuzz-corpus/$name"
  touch "$BUILD/fuzz-logs/$name.start"
  BEFORE[$name]=$(find "$BUILD/fuzz-corpus/$name" -type f | wc -l)
  echo "--- $name: ${SECONDS_PER_FUZZER}s"
  run_fuzzer "$name" &
  running=$((running + 1))
  if [ "$running" -ge "${DET_FUZZ_JOBS:-2}" ]; then
    wait -n || true
    running=$((running - 1))
  fi
done
wait || true

ROWS=()
FAILED=()
for name in "${FUZZERS[@]}"; do
  corpus="$BUILD/fuzz-corpus/$name"
  log="$BUILD/fuzz-logs/$name.log"
  stamp="$BUILD/fuzz-logs/$name.start"
  status=$(cat "$BUILD/fuzz-logs/$name.rc" 2>/dev/null || echo 1)
  findings=$(find "$BUILD/fuzz-findings" -name "$name-*" -type f -newer "$stamp" | wc -l)
  if [ "$status" -ne 0 ] && [ "$findings" -eq 0 ]; then findings=1; fi  # died without a file
  executions=$(stat_of number_of_executed_units "$log")
  per_second=$(stat_of average_exec_per_sec "$log")
  size=$(grep -oE 'corp: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
  added=$(($(find "$corpus" -type f | wc -l) - BEFORE[$name]))
  ROWS+=("$(printf '%-20s %12s %8s %7s %5s %9s' "$name" "${executions:-?}" "${per_second:-?}" \
    "${size:-?}" "$added" "$findings")")
  if [ "$findings" -ne 0 ]; then
    FAILED+=("$name")
    echo "$name: finding (exit $status); the report ($log):"
    grep -E '^(==[0-9]+==|SUMMARY|.*runtime error|.*terminate called|.*what\(\)|.*ERROR: libFuzzer|artifact_prefix|Test unit written)' \
      "$log" | head -20 || true
    find "$BUILD/fuzz-findings" -name "$name-*" -type f -newer "$stamp"
  fi
done

echo
printf '%-20s %12s %8s %7s %5s %9s\n' fuzzer executions exec/s corpus new findings
printf '%s\n' "${ROWS[@]}"
if [ ${#FAILED[@]} -ne 0 ]; then
  echo "findings in: ${FAILED[*]} (reproduce: $BUILD/tests/<fuzzer> <file>)"
  exit 1
fi

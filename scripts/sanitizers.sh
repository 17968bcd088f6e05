#!/usr/bin/env bash
# The tests under clang's sanitizers, each in a build tree of its own:
#   scripts/sanitizers.sh        what scripts/test.sh runs (sized to fit CI's time):
#                                  every unit test under ASan+UBSan (build-asan); a cross-section
#                                  of the integration tests (experiments end to end, restarts of
#                                  agents and the master, REST, users, hostile input, the AWS
#                                  autoscaler) against det-master, det-agent, det-autoscaler and
#                                  det built with ASan+UBSan; the tests of the threaded parts
#                                  (concurrency_tests: bus, RPC workers, pool workers, Docker
#                                  client, processes) under TSan (build-tsan)
#   scripts/sanitizers.sh full   the soak mode: also every unit test under TSan, and every
#                                integration and multi-host test against the sanitized binaries;
#                                about 21 minutes on two cores once the trees are built
#   scripts/sanitizers.sh build  only builds what the quick mode runs (and the fuzzers), in one
#                                ninja call per tree: what scripts/test.sh does at a low priority
#                                while the other tests run
# A sanitizer report fails the test it happens in (ASan, UBSan: -fno-sanitize-recover; TSan:
# halt_on_error). The sanitized processes the integration tests start write their reports to
# files (log_path), which fail the run whatever the test saw. Suppressions: tests/tsan.supp (each
# with its reason). The integration tests' own binaries come from the plain tree (build; built
# here if missing): what is checked is the processes they start. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
MODE="${1:-quick}"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/tsan.supp"
# As ctest's entries have it (DET_TEST_ENVIRONMENT in CMakeLists.txt): the Python processes the
# integration tests start keep their compiled modules in the build tree.
export PYTHONDONTWRITEBYTECODE='' PYTHONPYCACHEPREFIX="$PWD/build/pycache"

# The integration tests run against sanitized binaries in quick mode (about two minutes, beside
# the ASan unit tests: about three minutes for both once the trees are built, five one after the
# other).
QUICK_INTEGRATION="HostileInputTest.*:ExperimentProcessTest.SingleTrial*:ExperimentProcessTest.Pause*"
QUICK_INTEGRATION+=":ExperimentProcessTest.KilledTrial*:ExperimentProcessTest.BadConfigs*"
QUICK_INTEGRATION+=":ExperimentProcessTest.RestApi*:ClusterRestTest.*:ClusterProcessTest.AgentSurvives*"
QUICK_INTEGRATION+=":WorkloadProcessTest.AgentKilled*:WorkloadProcessTest.MasterKilled*"
QUICK_INTEGRATION+=":WorkloadProcessTest.BadRequests*:AgentControlTest.TheBus*"
QUICK_INTEGRATION+=":UserRestTest.Logins*:UserRestTest.EveryOperation*:AwsAutoscalerTest.OnDemand*"

configure() {  # configure DIR CMAKE_OPTIONS...
  local dir=$1
  shift
  if [ ! -f "$dir/build.ninja" ]; then
    CC=clang CXX=clang++ cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug "$@" >/dev/null
  fi
}

# run_binaries DIR BINARY...: each GoogleTest binary of DIR/tests once, whole, two at a time
# (ctest would start a process per test: under ASan+UBSan the unit tests took 239 CPU-s that way
# and 37 in one process per binary, each sanitized start and leak check costing a third of a
# second); the summary line of each when it passes, its output's end when it fails. A binary gets
# 10 minutes.
run_binaries() {
  local dir=$1 logs status=0
  shift
  logs=$(mktemp -d)
  printf '%s\n' "$@" | DET_BUILD_DIR="$PWD/$dir" DET_SOURCE_DIR="$PWD" xargs -P 2 -I{} \
    sh -c 'timeout 600 "$1/tests/$2" --gtest_brief=1 >"$3/$2.log" 2>&1; echo $? >"$3/$2.rc"' \
    _ "$dir" {} "$logs"
  for binary in "$@"; do
    if [ "$(cat "$logs/$binary.rc")" = 0 ]; then
      echo "$binary: $(grep -E '^\[  PASSED  \]' "$logs/$binary.log" | tail -1)"
    else
      echo "$binary: FAILED (exit $(cat "$logs/$binary.rc")); its output ends:"
      tail -300 "$logs/$binary.log"
      status=1
    fi
  done
  rm -rf "$logs"
  return "$status"
}
# unit_binaries DIR: the unit test binaries DIR holds (unit_<folder>, tests/CMakeLists.txt).
unit_binaries() { find "$1/tests" -maxdepth 1 -type f -executable -name 'unit_*' -printf '%f\n' | sort; }

# against_sanitized_binaries TEST_BINARY GTEST_FILTER: runs the plain tree's test binary with
# DET_BUILD_DIR=build-asan; fails on a failing test or on any report a sanitized process wrote.
against_sanitized_binaries() {
  local binary=$1 filter=$2 reports log status=0
  reports=$(mktemp -d)
  log=$(mktemp)
  ASAN_OPTIONS="$ASAN_OPTIONS:log_path=$reports/asan" \
    UBSAN_OPTIONS="$UBSAN_OPTIONS:log_path=$reports/ubsan" DET_BUILD_DIR="$PWD/build-asan" \
    "build/tests/$binary" --gtest_brief=1 --gtest_filter="$filter" >"$log" 2>&1 || status=1
  if [ "$status" -ne 0 ]; then tail -200 "$log"; else tail -2 "$log"; fi
  if [ -n "$(ls -A "$reports")" ]; then
    echo "sanitizer reports from the processes under test:"
    head -n 80 "$reports"/*
    status=1
  fi
  rm -rf "$reports" "$log"
  return "$status"
}

ASAN_TARGETS=(unit_tests det-master det-agent det-autoscaler det fake-ec2 fake-gce fake-docker)
for source in tests/fuzz/*_fuzzer.cc; do ASAN_TARGETS+=("$(basename "$source" .cc)"); done
if [ "$MODE" = full ]; then TSAN_TARGETS=(concurrency_tests unit_tests); else TSAN_TARGETS=(concurrency_tests); fi
build_trees() {
  configure build-asan -DDET_SANITIZE=ON -DDET_FUZZ=ON -DDET_UNIT_ONLY=ON
  ninja -C build-asan "${ASAN_TARGETS[@]}"
  configure build-tsan -DDET_TSAN=ON -DDET_UNIT_ONLY=ON
  ninja -C build-tsan "${TSAN_TARGETS[@]}"
}
if [ "$MODE" = build ]; then
  build_trees
  exit 0
fi

FAILED=0  # every part runs; one failure does not hide another
build_trees
[ -x build/tests/integration_tests ] || ninja -C build integration_tests multihost_tests
# The unit tests and the integration tests side by side: the unit tests keep the CPU busy while
# the integration tests' processes wait on each other (each part's output is printed whole once
# both have ended).
PARTS=$(mktemp -d)
(
  status=0
  echo "--- ASan+UBSan: unit tests (build-asan)"
  mapfile -t binaries < <(unit_binaries build-asan)
  run_binaries build-asan "${binaries[@]}" || status=1
  echo "$status" >"$PARTS/unit.rc"
) >"$PARTS/unit.log" 2>&1 &
(
  status=0
  echo "--- ASan+UBSan: integration tests against sanitized det-master, det-agent, det-autoscaler"
  if [ "$MODE" = full ]; then
    against_sanitized_binaries integration_tests '*' || status=1
    against_sanitized_binaries multihost_tests '*' || status=1
  else
    against_sanitized_binaries integration_tests "$QUICK_INTEGRATION" || status=1
  fi
  echo "$status" >"$PARTS/integration.rc"
) >"$PARTS/integration.log" 2>&1 &
wait
for part in unit integration; do
  cat "$PARTS/$part.log"
  [ "$(cat "$PARTS/$part.rc" 2>/dev/null)" = 0 ] || FAILED=1
done
rm -rf "$PARTS"

echo "--- TSan: concurrency tests (build-tsan)"
run_binaries build-tsan concurrency_tests || FAILED=1
if [ "$MODE" = full ]; then
  echo "--- TSan: every unit test"
  mapfile -t binaries < <(unit_binaries build-tsan)
  run_binaries build-tsan "${binaries[@]}" || FAILED=1
fi
exit "$FAILED"

#!/usr/bin/env bash
# Checks formatting (.clang-format) of every C++ file, that every include points down the layers
# (scripts/check_layering.py, docs/architecture.md), that the product reads time only through a
# Clock, and runs the curated .clang-tidy checks on the product's sources. Exits non-zero on any
# finding.
#   scripts/lint.sh        every check of .clang-tidy, the static analyzer's path-sensitive
#                          clang-analyzer-core/cplusplus included (the analyzer doubles the time),
#                          on each source with its own compile command (build/lint-db: a tree
#                          configured, never built, without unity batches), which also shows a
#                          source that does not include what it uses; run it before a change is
#                          merged
#   scripts/lint.sh quick  the same checks without the analyzer, on one translation unit per
#                          product folder made from the build tree's compile commands (build/,
#                          configured here if it is not; scripts/lint_batches.py): what
#                          scripts/test.sh, and so CI, runs. clang-tidy's matchers walk the heavy
#                          headers once per unit: 4 minutes of CPU here, against 9 on the build's
#                          unity batches and about 40 source by source
# Both report in the product's headers too (the header filter is anchored at this folder: the
# paths clang-tidy matches are absolute).
# Tests are formatted but not tidied: the analyzer spends minutes per GoogleTest file (the macros
# expand to a great deal of code) and tests are compiled with -Werror and run under ASan+UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
PRODUCT="common|bus|storage|provider|master|agent|autoscaler|cloud_aws|cloud_gcp|cli"
mapfile -t files < <(git ls-files '*.cc' '*.h' 2>/dev/null || find . -name '*.cc' -o -name '*.h')
clang-format --dry-run -Werror "${files[@]}"
python3 scripts/check_layering.py
# Time is injected (STYLE.md): outside common/clock.h the product reads time through a Clock.
CLOCK_READS='(steady|system|high_resolution)_clock::now'
if git grep -n -E "$CLOCK_READS" -- ${PRODUCT//|/ } object_store ':!common/clock.h' 2>/dev/null; then
  echo "the lines above read std::chrono's clocks: read a Clock (RealClock::Instance() on real sockets)"
  exit 1
fi
if [ "${1:-full}" = quick ]; then
  [ -f build/build.ninja ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  ninja -C build master/front/harness_py.cc master/front/openapi_json.cc >/dev/null  # generated, included
  # One translation unit per product folder, largest first (scripts/lint_batches.py says why).
  DB=build/lint-batches
  rm -rf "$DB"
  mapfile -t sources < <(python3 scripts/lint_batches.py build "$PRODUCT" "$DB")
  # A unit #includes its sources: they are reported as headers, so the filter names them.
  CHECKS=(--checks='-clang-analyzer-*,-bugprone-suspicious-include')
  PER_CALL=1
else
  cmake -S . -B build/lint-db -G Ninja -DDET_UNITY_BUILD=OFF >/dev/null
  DB=build/lint-db
  mapfile -t sources < <(printf '%s\n' "${files[@]}" | grep '\.cc$' | grep -v '^tests/')
  CHECKS=()
  PER_CALL=4
fi
CHECKS+=(--header-filter="^$PWD/($PRODUCT)/")
# clang-tidy exits non-zero on findings; the findings themselves decide below.
{ printf '%s\n' "${sources[@]}" | xargs -P 2 -n "$PER_CALL" clang-tidy -p "$DB" --quiet "${CHECKS[@]}" 2>/dev/null || true; } | \
  { grep -E "(warning|error):" || true; } > build/clang-tidy.log
if [ -s build/clang-tidy.log ]; then cat build/clang-tidy.log; exit 1; fi
echo "format and lint clean (${#files[@]} files)"

#!/usr/bin/env bash
# Checks formatting (.clang-format) of every C++ file and runs the curated .clang-tidy checks on
# the product's sources (with the compile commands of build/lint-db: a tree configured, never
# built, without unity batches so that each source has its own command). Exits non-zero on any
# finding.
#   scripts/lint.sh        every check of .clang-tidy, the static analyzer's path-sensitive
#                          clang-analyzer-core/cplusplus included (the analyzer doubles the time)
#   scripts/lint.sh quick  the same without the analyzer: what scripts/test.sh, and so CI, runs
#                          (sized to CI's time); run the full mode before a change is merged
# Tests are formatted but not tidied: the analyzer spends minutes per GoogleTest file (the macros
# expand to a great deal of code) and tests are compiled with -Werror and run under ASan+UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
CHECKS=()
if [ "${1:-full}" = quick ]; then CHECKS=(--checks='-clang-analyzer-*'); fi
mapfile -t files < <(git ls-files '*.cc' '*.h' 2>/dev/null || find . -name '*.cc' -o -name '*.h')
clang-format --dry-run -Werror "${files[@]}"
cmake -S . -B build/lint-db -G Ninja -DDET_UNITY_BUILD=OFF >/dev/null
mapfile -t sources < <(printf '%s\n' "${files[@]}" | grep '\.cc$' | grep -v '^tests/')
# clang-tidy exits non-zero on findings; the findings themselves decide below.
{ printf '%s\n' "${sources[@]}" | xargs -P 2 -n 8 clang-tidy -p build/lint-db --quiet "${CHECKS[@]}" 2>/dev/null || true; } | \
  { grep -E "(warning|error):" || true; } > build/clang-tidy.log
if [ -s build/clang-tidy.log ]; then cat build/clang-tidy.log; exit 1; fi
echo "format and lint clean (${#files[@]} files)"

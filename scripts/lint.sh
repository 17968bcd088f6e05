#!/usr/bin/env bash
# Checks formatting (.clang-format) of every C++ file and runs the curated .clang-tidy checks on
# the product's sources (with the compile commands of build/lint-db: a tree configured, never
# built, without unity batches so that each source has its own command). Exits non-zero on any
# finding.
# Tests are formatted but not tidied: the analyzer spends minutes per GoogleTest file (the macros
# expand to a great deal of code) and tests are compiled with -Werror and run under ASan+UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cc' '*.h' 2>/dev/null || find . -name '*.cc' -o -name '*.h')
clang-format --dry-run -Werror "${files[@]}"
cmake -S . -B build/lint-db -G Ninja -DDET_UNITY_BUILD=OFF >/dev/null
mapfile -t sources < <(printf '%s\n' "${files[@]}" | grep '\.cc$' | grep -v '^tests/')
# clang-tidy exits non-zero on findings; the findings themselves decide below.
{ printf '%s\n' "${sources[@]}" | xargs -P 2 -n 8 clang-tidy -p build/lint-db --quiet 2>/dev/null || true; } | \
  { grep -E "(warning|error):" || true; } > build/clang-tidy.log
if [ -s build/clang-tidy.log ]; then cat build/clang-tidy.log; exit 1; fi
echo "format and lint clean (${#files[@]} files)"

#!/usr/bin/env bash
# A run test with an expected output (cs_add_run_test's PASS_REGEX, tests/testing.cmake): passes
# when the program exits 0 and its output, stdout and stderr together, matches the regular
# expression. CTest's own PASS_REGULAR_EXPRESSION ignores the exit code, so a stage whose launch or
# plan line matched would pass with its check failed. Any other exit code is passed on as it is (77:
# no usable GPU, which CTest reports as skipped).
# Usage: run_matching.sh <regex> <program> [arguments...]
# The regex is CMake's (as PASS_REGULAR_EXPRESSION takes it), matched by grep -E over the whole
# output at once (-z: '.' also matches a newline, so a pattern may span lines as it does in CMake's).
set -u
regex=$1
shift
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$@" >"$out" 2>&1
code=$?
cat "$out"
((code == 0)) || exit "$code"
if ! grep -Ezq -- "$regex" "$out"; then
  echo "FAIL: exit 0, but the output does not match: $regex"
  exit 1
fi

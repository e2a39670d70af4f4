#!/usr/bin/env bash
# The test of hang_or_fail.sh, the judge of the broken copies that may hang: it must pass a program
# that reports FAIL or never finishes, fail one that passes its check or exits any other way, and
# pass exit code 77 (skipped) on. Each case is a small shell program in place of a stage.
set -u
judge="$(dirname "$0")/hang_or_fail.sh"
failures=0
expect() { # expected status, description, then the program's command
  local want=$1 what=$2
  shift 2
  bash "$judge" 1 "$@" >/dev/null 2>&1
  local got=$?
  if ((got == want)); then
    echo "ok: $what (exit $got)"
  else
    echo "FAIL: $what: exit $got, expected $want"
    failures=$((failures + 1))
  fi
}
expect 0 "a program still running after the limit is caught" bash -c 'sleep 30'
expect 0 "a program whose check reports FAIL is caught" bash -c 'echo "Result = FAIL"; exit 1'
expect 1 "a program whose check passes is not caught" bash -c 'echo "Result = PASS"'
expect 1 "a program that fails otherwise (a CUDA error) is not caught" bash -c 'echo "CUDA error"; exit 3'
expect 77 "a program with no GPU (exit 77) is skipped" bash -c 'echo "SKIP: no usable CUDA GPU"; exit 77'
((failures == 0)) || exit 1
echo "hang_or_fail.sh judges all five cases right"

#!/usr/bin/env bash
# Runs a deliberately broken copy under a time limit, for a breakage that can show either way: it
# passes (the breakage was caught) when the program's check reports FAIL or when the program has not
# finished after <seconds>, many times what the correct stage takes at that size (a kernel waiting
# on a barrier phase that never completes waits forever). It fails when the program passes its
# check, or exits any other way. Exit 77 (no usable GPU) is passed on: skipped.
# Usage: hang_or_fail.sh <seconds> <program> [args...]
set -u
limit=$1
shift
out=$(timeout -k 5 "$limit" "$@" 2>&1)
code=$?
printf '%s\n' "$out" | tail -n 4
if ((code == 77)); then
  exit 77
elif ((code == 124 || code == 137)); then
  echo "caught: still running after $limit s, stopped"
elif [[ $out == *"Result = FAIL"* ]]; then
  echo "caught: the check reported FAIL"
else
  echo "not caught: exit status $code"
  exit 1
fi

#!/usr/bin/env bash
# Tests tests/run_matching.sh with stand-in programs (no GPU): a run passes only when it exits 0
# and its output matches, a failed check fails however well its output matches, a skip stays a
# skip, and a pattern may span lines. Usage: run_matching_test.sh <run_matching.sh>
set -u
run=$1
failed=0
check() { # description, expected exit status, regex, command...
  local what=$1 expected=$2 regex=$3
  shift 3
  bash "$run" "$regex" "$@" >/dev/null 2>&1
  local status=$?
  if ((status == expected)); then echo "ok: $what"; else
    echo "FAIL: $what (exit $status, expected $expected)"
    failed=1
  fi
}
plan='chosen: 128x256x64/s4, split never'
check "exit 0 and a match pass" 0 "chosen: [0-9]+x256x64/s4" sh -c "echo '$plan'; echo 'Result = PASS'"
check "a failed check fails although the plan matches" 1 "chosen: [0-9]+x256x64/s4" \
  sh -c "echo '$plan'; echo 'Result = FAIL'; exit 1"
check "a CUDA error's exit code is passed on" 3 "chosen:" sh -c "echo '$plan'; exit 3"
check "exit 77 (no usable GPU) stays 77" 77 "chosen:" sh -c 'echo "SKIP: no usable CUDA GPU"; exit 77'
check "exit 0 without a match fails" 1 "chosen: 64x64" sh -c "echo '$plan'"
check "a pattern spans lines, and stderr counts" 0 "grid \\(x, y\\) = \\(24, 1\\).*one block per SM" \
  sh -c 'echo "grid (x, y) = (24, 1) blocks"; echo "one block per SM" >&2'
check "JSON braces and quotes" 0 '\{"stage":"12_bf16_inputs".*"result":"PASS",?.*"inputs":"bf16"' \
  sh -c "echo '{\"stage\":\"12_bf16_inputs\",\"result\":\"PASS\",\"inputs\":\"bf16\"}'"
exit $failed

#!/usr/bin/env bash
# Tests perf_ratio.sh without a GPU: a canned report (sample_report.txt: a run of the transpose with
# a yardstick, a variant without a time, quotes, '|' and ';' in its texts) stands in for the
# programs. Each case checks the exit status and the last line printed. Registered in
# tests/grader/CMakeLists.txt; exit status 0 when every case holds.
# shellcheck disable=SC2016 # the programs below are sh scripts in single quotes
set -u
here=$(cd "$(dirname "$0")" && pwd)
failures=0

# expect <status> <regex for the last line> <perf_ratio.sh arguments...>
expect() {
  local status=$1 pattern=$2 output code last
  shift 2
  output=$(bash "$here/perf_ratio.sh" "$@" 2>&1)
  code=$?
  last=${output##*$'\n'}
  if ((code == status)) && [[ $last =~ $pattern ]]; then
    echo "ok (exit $code): $last"
  else
    echo "FAILED: perf_ratio.sh $*"
    echo "  exit $code (expected $status); output:"
    while IFS= read -r line; do echo "  | $line"; done <<<"$output"
    failures=$((failures + 1))
  fi
}

# Programs that stand in for a stage (perf_ratio.sh appends --json, which they ignore; "$0" is the
# argument after the script).
report=(sh -c 'cat "$0"' "$here/sample_report.txt")
failed_run=(sh -c 'cat "$0"; exit 1' "$here/sample_report.txt")
no_gpu=(sh -c 'echo "SKIP: no usable CUDA GPU (none here)"; exit 77')
garbled=(sh -c 'echo "{\"stage\":\"05_transpose\",\"variants\":[{\"name\""')

expect 0 '^PASS: padded_64x32 0.1424 ms, naive 1.234 ms: padded_64x32 is 8.67x faster \(needed: 2x\)$' \
  2 padded_64x32 naive -- "${report[@]}"
expect 1 '^FAIL: padded_64x32 0.1424 ms, naive 1.234 ms: padded_64x32 is 8.67x faster \(needed: 10x\)$' \
  10 padded_64x32 naive -- "${report[@]}"
# The slow variant from a second run; the yardstick is a variant like any other.
expect 0 '^PASS: memcpy 0.13 ms, padded_64x32 0.1424 ms: memcpy is 1.10x faster \(needed: 1.05x\)$' \
  1.05 memcpy padded_64x32 -- "${report[@]}" -- "${report[@]}"
expect 1 "^FAIL: no time for variant 'unchecked' in the report$" 1 unchecked naive -- "${report[@]}"
expect 1 "^FAIL: no time for variant 'tiled' in the report$" 1 padded_64x32 tiled -- "${report[@]}"
expect 1 '^FAIL: sh did not pass its own checks \(exit 1\), so its speed is not graded$' \
  2 padded_64x32 naive -- "${failed_run[@]}"
expect 1 '^FAIL: sh did not pass its own checks \(exit 1\), so its speed is not graded$' \
  2 padded_64x32 naive -- "${report[@]}" -- "${failed_run[@]}"
expect 77 '^SKIP: no usable CUDA GPU' 2 padded_64x32 naive -- "${no_gpu[@]}"
expect 1 '^FAIL: the JSON report of sh could not be read \(above\)$' 2 padded_64x32 naive -- "${garbled[@]}"
expect 2 '^perf_ratio.sh <min-speedup>' 2 padded_64x32 naive "${report[@]}"

((failures == 0)) && echo "perf_ratio.sh: every case holds" || echo "perf_ratio.sh: $failures case(s) failed"
((failures == 0))
